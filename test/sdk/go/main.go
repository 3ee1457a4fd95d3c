// Command gatewaysdkcheck proves the official openai-go SDK works unchanged against the gateway.
//
// It reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment (the SDK's own defaults) and the
// model names from SDK_CHECK_* variables (defaults match test/sdk/sdk-compat.test.ts). It prints one
// JSON line of results on stdout and exits 0; on the first mismatch it prints `MISMATCH: ...` on
// stderr and exits 1.
package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

const prompt = "hello from go"

var (
	chatModel     = env("SDK_CHECK_CHAT_MODEL", "demo-chat")
	toolModel     = env("SDK_CHECK_TOOL_MODEL", "gpt-4o-mini")
	slashModel    = env("SDK_CHECK_SLASH_MODEL", "deepseek-ai/DeepSeek-V3")
	embedModel    = env("SDK_CHECK_EMBED_MODEL", "demo-embedding")
	brokenModel   = env("SDK_CHECK_BROKEN_MODEL", "") // optional: its provider stalls every stream after one chunk
	expectedReply = env("SDK_CHECK_EXPECTED_REPLY", "Demo reply to: "+prompt)
)

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

type mismatch struct{ msg string }

func (m mismatch) Error() string { return m.msg }

// expect aborts the current check (recovered in run) when cond is false.
func expect(cond bool, what string, got any) {
	if !cond {
		panic(mismatch{fmt.Sprintf("%s (got %#v)", what, got)})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

type result = map[string]any

var (
	ctx    = context.Background()
	client = openai.NewClient(option.WithRequestTimeout(30 * time.Second)) // base URL and key from the environment
)

func userMessages(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}

func chatNonStream() result {
	var raw *http.Response
	r := must(client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    chatModel,
		Messages: userMessages(prompt),
	}, option.WithResponseInto(&raw)))
	expect(r.Object == "chat.completion", "object", r.Object)
	expect(len(r.Choices) == 1, "one choice", len(r.Choices))
	c := r.Choices[0]
	expect(c.Message.Role == "assistant", "message.role", c.Message.Role)
	expect(c.Message.Content == expectedReply, "message.content", c.Message.Content)
	expect(c.FinishReason == "stop", "finish_reason", c.FinishReason)
	expect(r.Usage.PromptTokens > 0 && r.Usage.CompletionTokens > 0 && r.Usage.TotalTokens == r.Usage.PromptTokens+r.Usage.CompletionTokens, "usage", r.Usage.RawJSON())
	rid := raw.Header.Get("x-request-id")
	expect(rid != "", "x-request-id header", rid)
	costField, ok := r.Usage.JSON.ExtraFields["cost"]
	var cost float64
	expect(ok && json.Unmarshal([]byte(costField.Raw()), &cost) == nil && cost > 0, "usage.cost as an extra field", r.Usage.RawJSON())
	return result{"content": c.Message.Content, "finish_reason": c.FinishReason, "request_id": rid, "cost": cost}
}

// streamText streams demo-chat through the ChatCompletionAccumulator and checks the wire shape.
func streamText(includeUsage bool) result {
	params := openai.ChatCompletionNewParams{Model: chatModel, Messages: userMessages(prompt)}
	if includeUsage {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	var raw *http.Response
	stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&raw))
	defer stream.Close()
	acc := openai.ChatCompletionAccumulator{}
	n, usageChunks := 0, 0
	firstRole := ""
	justFinished := ""
	ids := map[string]bool{}
	for stream.Next() {
		chunk := stream.Current()
		n++
		ids[chunk.ID] = true
		expect(acc.AddChunk(chunk), "accumulator accepts the chunk", chunk.RawJSON())
		if chunk.JSON.Usage.Valid() {
			expect(len(chunk.Choices) == 0, "usage only on a choices:[] chunk", chunk.RawJSON())
			usageChunks++
			continue
		}
		expect(len(chunk.Choices) == 1, "one choice per content chunk", chunk.RawJSON())
		if n == 1 {
			firstRole = chunk.Choices[0].Delta.Role
		}
		if content, ok := acc.JustFinishedContent(); ok {
			justFinished = content
		}
	}
	expect(stream.Err() == nil, "stream error", fmt.Sprint(stream.Err()))
	rid := raw.Header.Get("x-request-id")
	expect(rid != "", "x-request-id on a stream", rid)
	expect(firstRole == "assistant", "role:assistant on the first delta", firstRole)
	expect(len(ids) == 1, "one chunk id across the stream", ids)
	expect(len(acc.Choices) == 1, "accumulated choices", len(acc.Choices))
	text := acc.Choices[0].Message.Content
	expect(text == expectedReply, "accumulated text", text)
	expect(justFinished == expectedReply, "JustFinishedContent", justFinished)
	expect(acc.Choices[0].FinishReason == "stop", "accumulated finish_reason", acc.Choices[0].FinishReason)
	out := result{"chunks": n, "text": text, "finish_reason": acc.Choices[0].FinishReason, "request_id": rid}
	if includeUsage {
		expect(usageChunks == 1, "exactly one usage chunk with include_usage", usageChunks)
		u := acc.Usage
		expect(u.PromptTokens > 0 && u.CompletionTokens > 0 && u.TotalTokens == u.PromptTokens+u.CompletionTokens, "accumulated usage", u.RawJSON())
		out["usage"] = result{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	} else {
		expect(usageChunks == 0, "no usage chunk without include_usage", usageChunks)
	}
	return out
}

func streamToolCall() result {
	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather for a city."),
		Parameters: openai.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]string{"type": "string"}},
			"required":   []string{"city"},
		},
	})
	params := openai.ChatCompletionNewParams{
		Model:    toolModel,
		Messages: userMessages("What is the weather in Paris?"),
		Tools:    []openai.ChatCompletionToolUnionParam{tool},
	}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	acc := openai.ChatCompletionAccumulator{}
	var finished []openai.FinishedChatCompletionToolCall
	idDeltas := 0
	for stream.Next() {
		chunk := stream.Current()
		expect(acc.AddChunk(chunk), "accumulator accepts the chunk", chunk.RawJSON())
		for _, ch := range chunk.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" {
					idDeltas++
				}
			}
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	expect(stream.Err() == nil, "stream error", fmt.Sprint(stream.Err()))
	expect(idDeltas == 1, "tool call id only in the first delta", idDeltas)
	expect(len(finished) == 1, "one JustFinishedToolCall", finished)
	expect(finished[0].Name == "get_weather" && finished[0].Arguments == `{"city":"Paris"}`, "finished tool call", finished[0])
	c := acc.Choices[0]
	expect(c.FinishReason == "tool_calls", "finish_reason", c.FinishReason)
	expect(len(c.Message.ToolCalls) == 1, "accumulated tool calls", len(c.Message.ToolCalls))
	call := c.Message.ToolCalls[0]
	expect(strings.HasPrefix(call.ID, "call_") && strings.Count(call.ID, "call_") == 1, "tool call id", call.ID)
	expect(call.Type == "function" && call.Function.Name == "get_weather", "tool call type/name", call.RawJSON())
	var args struct{ City string }
	expect(json.Unmarshal([]byte(call.Function.Arguments), &args) == nil && args.City == "Paris", "tool call arguments", call.Function.Arguments)

	// Send the result back: the accumulated message converts to a param, plus a tool message.
	params.Messages = append(params.Messages, c.Message.ToParam(), openai.ToolMessage("sunny", call.ID))
	follow := must(client.Chat.Completions.New(ctx, params))
	expect(follow.Choices[0].Message.Content == "Tool said: sunny", "reply to the tool result", follow.Choices[0].Message.Content)
	return result{"tool": call.Function.Name, "arguments": call.Function.Arguments, "finish_reason": c.FinishReason, "after_tool": follow.Choices[0].Message.Content}
}

func models() result {
	page := must(client.Models.List(ctx))
	var ids []string
	for _, m := range page.Data {
		expect(m.Object == "model" && m.Created > 0 && m.OwnedBy != "", "model object", m.RawJSON())
		ids = append(ids, m.ID)
	}
	for _, want := range []string{chatModel, embedModel, toolModel, slashModel} {
		expect(slices.Contains(ids, want), "models.list contains "+want, ids)
	}
	var raw *http.Response
	m := must(client.Models.Get(ctx, slashModel, option.WithResponseInto(&raw))) // sent as deepseek-ai%2FDeepSeek-V3
	expect(m.ID == slashModel && m.Object == "model", "Models.Get with a / id", m.RawJSON())
	expect(strings.Contains(raw.Request.URL.EscapedPath(), "%2F"), "the SDK escaped the /", raw.Request.URL.EscapedPath())
	_, err := client.Models.Get(ctx, "no-such/model")
	var apiErr *openai.Error
	expect(errors.As(err, &apiErr) && apiErr.StatusCode == 404 && apiErr.Code == "model_not_found", "unknown model Get", fmt.Sprint(err))
	return result{"ids": ids, "retrieved": m.ID, "owned_by": m.OwnedBy}
}

func embeddings() result {
	input := openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"alpha beta", "gamma"}}
	flt := must(client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: embedModel, Input: input, EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat}))
	expect(len(flt.Data) == 2 && flt.Data[0].Index == 0 && flt.Data[1].Index == 1, "two embeddings in order", len(flt.Data))
	expect(strings.HasPrefix(flt.Data[0].JSON.Embedding.Raw(), "["), "float format is a JSON array", flt.Data[0].JSON.Embedding.Raw()[:10])
	vf := flt.Data[0].Embedding
	expect(len(vf) > 0, "float vector", len(vf))
	expect(flt.Usage.TotalTokens > 0, "embeddings usage", flt.Usage.RawJSON())
	b64 := must(client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: embedModel, Input: input, EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64}))
	// openai-go has no base64 default and (at this version) leaves decoding to the caller: packed
	// little-endian float32, as the Python and Node SDKs decode it.
	var packed string
	expect(json.Unmarshal([]byte(b64.Data[0].JSON.Embedding.Raw()), &packed) == nil, "base64 format is a JSON string", b64.Data[0].JSON.Embedding.Raw())
	bytes, err := base64.StdEncoding.DecodeString(packed)
	expect(err == nil && len(bytes)%4 == 0, "valid base64 of float32 values", packed)
	vb := make([]float64, len(bytes)/4)
	for i := range vb {
		vb[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(bytes[i*4:])))
	}
	expect(len(vb) == len(vf), "base64 and float dimensions agree", []int{len(vb), len(vf)})
	for i := range vf {
		expect(math.Abs(vf[i]-vb[i]) < 1e-6, "base64 and float vectors agree", []float64{vf[i], vb[i]})
	}
	dims := must(client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: embedModel, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("alpha")}, Dimensions: openai.Int(16)}))
	expect(len(dims.Data[0].Embedding) == 16, "dimensions=16", len(dims.Data[0].Embedding))
	return result{"dims": len(vf), "base64_on_wire": true, "float_matches_base64": true}
}

func asAPIError(err error, what string) *openai.Error {
	var apiErr *openai.Error
	expect(errors.As(err, &apiErr), what+" is an *openai.Error", fmt.Sprintf("%T %v", err, err))
	expect(apiErr.Response != nil && apiErr.Response.Header.Get("x-request-id") != "", what+" carries x-request-id", apiErr.Response)
	return apiErr
}

func errorChecks() result {
	out := result{}
	_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "no-such-model-xyz", Messages: userMessages("hi")})
	e := asAPIError(err, "unknown model")
	expect(e.StatusCode == 404 && e.Code == "model_not_found" && e.Type == "invalid_request_error", "404 model_not_found", e.RawJSON())
	out["not_found"] = result{"status": e.StatusCode, "code": e.Code, "type": e.Type, "request_id": e.Response.Header.Get("x-request-id")}

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "no-such-model-xyz", Messages: userMessages("hi")})
	expect(!stream.Next(), "an unknown model stream yields nothing", nil)
	e = asAPIError(stream.Err(), "unknown model (stream)")
	expect(e.StatusCode == 404 && e.Code == "model_not_found", "404 on a stream request", e.RawJSON())
	out["not_found_stream"] = result{"status": e.StatusCode, "code": e.Code}

	_, err = client.Models.List(ctx, option.WithAPIKey("sk-gw-"+strings.Repeat("0", 40)))
	e = asAPIError(err, "wrong key")
	expect(e.StatusCode == 401 && e.Code == "invalid_api_key", "401 invalid_api_key", e.RawJSON())
	out["auth"] = result{"status": e.StatusCode, "code": e.Code, "type": e.Type}

	// Messages is required by ChatCompletionNewParams; the SDK's own Post sends a body without it.
	var ignored openai.ChatCompletion
	err = client.Post(ctx, "chat/completions", map[string]any{"model": chatModel}, &ignored)
	e = asAPIError(err, "missing messages")
	expect(e.StatusCode == 400 && e.Param == "messages" && e.Type == "invalid_request_error" && e.Code != "", "400 param=messages", e.RawJSON())
	out["bad_request"] = result{"status": e.StatusCode, "param": e.Param, "code": e.Code, "type": e.Type}

	if brokenModel != "" {
		s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: brokenModel, Messages: userMessages("one two three four five six")})
		chunks := 0
		for s.Next() {
			chunks++
		}
		var se *ssestream.StreamError
		expect(errors.As(s.Err(), &se), "an error after the 200 is a *ssestream.StreamError", fmt.Sprintf("%T %v (after %d chunks)", s.Err(), s.Err(), chunks))
		var body struct {
			Error struct{ Message, Type, Code string }
		}
		expect(json.Unmarshal(se.Event.Data, &body) == nil && body.Error.Type == "api_error" && body.Error.Message != "", "error event body", string(se.Event.Data))
		out["mid_stream"] = result{"error": "StreamError", "code": body.Error.Code, "type": body.Error.Type, "chunks_before": chunks}
	}
	return out
}

// run executes one check, turning a panic (mismatch or SDK error) into a returned error.
func run(name string, fn func() result) (res result, err error) {
	defer func() {
		if r := recover(); r != nil {
			if m, ok := r.(mismatch); ok {
				err = fmt.Errorf("MISMATCH in %s: %s", name, m.msg)
			} else {
				err = fmt.Errorf("FAILED in %s: %v\n%s", name, r, debug.Stack())
			}
		}
	}()
	return fn(), nil
}

func sdkVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/openai/openai-go/v3" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	results := result{"sdk": "openai-go", "version": sdkVersion()}
	checks := []struct {
		name string
		fn   func() result
	}{
		{"chat", chatNonStream},
		{"stream", func() result { return streamText(false) }},
		{"stream_usage", func() result { return streamText(true) }},
		{"stream_tools", streamToolCall},
		{"models", models},
		{"embeddings", embeddings},
		{"errors", errorChecks},
	}
	for _, c := range checks {
		res, err := run(c.name, c.fn)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		results[c.name] = res
	}
	out, err := json.Marshal(results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot encode results:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
