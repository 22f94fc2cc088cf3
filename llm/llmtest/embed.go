package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// EmbedDim is the length of the vectors Embed returns.
const EmbedDim = 256

// Embed is the deterministic embedding the server returns for text: a hashed bag of lower-cased
// words (letters and digits), each word adding 1 to one of EmbedDim buckets, normalised to unit
// length. Texts that share words get a positive cosine similarity; an empty text is the zero
// vector.
func Embed(text string) []float32 {
	v := make([]float32, EmbedDim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbedDim]++
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		n := float32(math.Sqrt(norm))
		for i := range v {
			v[i] /= n
		}
	}
	return v
}

// serveEmbeddings answers POST /v1/embeddings (OpenAI format) with Embed of each input. It does
// not consume a turn.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeError(w, OpenAI, http.StatusBadRequest, "llmtest: embeddings request: "+err.Error(), 0)
		return
	}
	var texts []string
	if err := json.Unmarshal(in.Input, &texts); err != nil {
		var one string
		if err := json.Unmarshal(in.Input, &one); err != nil {
			s.t.Errorf("llmtest: embeddings input is neither a string nor a list of strings: %s", in.Input)
			writeError(w, OpenAI, http.StatusBadRequest, fmt.Sprintf("llmtest: input must be a string or a list of strings, got %s", in.Input), 0)
			return
		}
		texts = []string{one}
	}
	data := make([]any, len(texts))
	tokens := 0
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embed(t)}
		tokens += (len(t) + 3) / 4
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": in.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}
