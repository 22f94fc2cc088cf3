package llm

// EstimateUsage approximates the usage of a call from its size, about four bytes a token, for
// servers that report none. It counts the system prompt, the messages, the tools and the output
// schema as input, and the answer's text and tool calls as output.
func EstimateUsage(req *Request, answer *Message) Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		in += len(m.Content) + 4 // a few tokens of framing per message
		for _, tc := range m.ToolCalls {
			in += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	if req.Output != nil {
		in += len(req.Output.Schema)
	}
	out := len(answer.Content)
	for _, tc := range answer.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	return Usage{InputTokens: int64((in + 3) / 4), OutputTokens: int64((out + 3) / 4)}
}
