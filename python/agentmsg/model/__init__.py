"""The values every job shares: blocks, messages, parse results and stream events, and the JSON
rule of tool-call arguments. Nothing here parses, counts or converts."""
