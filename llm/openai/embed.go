package openai

import (
	"context"
	"fmt"
	"slices"

	"github.com/labmate/labmate/llm"
	oa "github.com/openai/openai-go/v3"
)

// embedBatch is how many texts go in one /embeddings request.
const embedBatch = 256

// Embedder is an llm.Embedder on an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama,
// vLLM, llama.cpp with --embeddings, LM Studio).
type Embedder struct {
	model  string
	opts   Options
	client oa.Client
}

// NewEmbedder returns the embedding model named model, such as "text-embedding-3-small" or
// "nomic-embed-text".
func NewEmbedder(model string, opts *Options) *Embedder {
	o := opts.withDefaults()
	return &Embedder{model: model, opts: o, client: o.client()}
}

// Name implements llm.Embedder: provider:model.
func (e *Embedder) Name() string { return e.opts.Provider + ":" + e.model }

// Embed implements llm.Embedder. Texts go in batches of 256; the vectors come back in the order
// of texts, all of one length, or an error says which answer broke that.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, embedBatch) {
		resp, err := e.client.Embeddings.New(ctx, oa.EmbeddingNewParams{
			Model:          oa.EmbeddingModel(e.model),
			Input:          oa.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
			EncodingFormat: oa.EmbeddingNewParamsEncodingFormatFloat,
		})
		if err != nil {
			return nil, mapError(ctx, e.opts.Provider, err)
		}
		if len(resp.Data) != len(batch) {
			return nil, &llm.APIError{Kind: llm.ErrProvider, Provider: e.opts.Provider, Message: fmt.Sprintf("%d embeddings for %d texts", len(resp.Data), len(batch))}
		}
		vecs := make([][]float32, len(batch))
		for _, d := range resp.Data {
			if d.Index < 0 || int(d.Index) >= len(batch) || vecs[d.Index] != nil {
				return nil, &llm.APIError{Kind: llm.ErrProvider, Provider: e.opts.Provider, Message: fmt.Sprintf("embedding index %d out of range or repeated", d.Index)}
			}
			v := make([]float32, len(d.Embedding))
			for i, x := range d.Embedding {
				v[i] = float32(x)
			}
			vecs[d.Index] = v
		}
		out = append(out, vecs...)
	}
	for i, v := range out {
		if len(v) == 0 || len(v) != len(out[0]) {
			return nil, &llm.APIError{Kind: llm.ErrProvider, Provider: e.opts.Provider, Message: fmt.Sprintf("embedding %d has %d dimensions, embedding 0 has %d", i, len(v), len(out[0]))}
		}
	}
	return out, nil
}
