//! Which encoding a model name uses, as tiktoken's `model.py` maps it: an exact name first,
//! then the first matching prefix, in table order. Models whose encodings are not embedded here
//! (gpt2, r50k_base, p50k_base, p50k_edit, o200k_harmony) are listed too, so a caller can say
//! that the encoding is missing rather than that the model is unknown.

/// Model names and their encodings.
pub const MODEL_TO_ENCODING: &[(&str, &str)] = &[
    // reasoning
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4-mini", "o200k_base"),
    // chat
    ("gpt-5", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4o", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"),
    // base
    ("davinci-002", "cl100k_base"),
    ("babbage-002", "cl100k_base"),
    // embeddings
    ("text-embedding-ada-002", "cl100k_base"),
    ("text-embedding-3-small", "cl100k_base"),
    ("text-embedding-3-large", "cl100k_base"),
    // deprecated text, code, edit and embedding models, and GPT-2
    ("text-davinci-003", "p50k_base"),
    ("text-davinci-002", "p50k_base"),
    ("code-davinci-002", "p50k_base"),
    ("code-davinci-001", "p50k_base"),
    ("code-cushman-002", "p50k_base"),
    ("code-cushman-001", "p50k_base"),
    ("davinci-codex", "p50k_base"),
    ("cushman-codex", "p50k_base"),
    ("text-davinci-edit-001", "p50k_edit"),
    ("code-davinci-edit-001", "p50k_edit"),
    ("text-davinci-001", "r50k_base"),
    ("text-curie-001", "r50k_base"),
    ("text-babbage-001", "r50k_base"),
    ("text-ada-001", "r50k_base"),
    ("davinci", "r50k_base"),
    ("curie", "r50k_base"),
    ("babbage", "r50k_base"),
    ("ada", "r50k_base"),
    ("text-similarity-davinci-001", "r50k_base"),
    ("text-similarity-curie-001", "r50k_base"),
    ("text-similarity-babbage-001", "r50k_base"),
    ("text-similarity-ada-001", "r50k_base"),
    ("text-search-davinci-doc-001", "r50k_base"),
    ("text-search-curie-doc-001", "r50k_base"),
    ("text-search-babbage-doc-001", "r50k_base"),
    ("text-search-ada-doc-001", "r50k_base"),
    ("code-search-babbage-code-001", "r50k_base"),
    ("code-search-ada-code-001", "r50k_base"),
    ("gpt2", "gpt2"),
    ("gpt-2", "gpt2"),
];

/// Model name prefixes and their encodings, tried in this order.
pub const MODEL_PREFIX_TO_ENCODING: &[(&str, &str)] = &[
    ("o1-", "o200k_base"),
    ("o3-", "o200k_base"),
    ("o4-mini-", "o200k_base"),
    // chat
    ("gpt-5", "o200k_base"),
    ("gpt-4.5-", "o200k_base"),
    ("gpt-4.1-", "o200k_base"),
    ("chatgpt-4o-", "o200k_base"),
    ("gpt-4o-", "o200k_base"),
    ("gpt-4-", "cl100k_base"),
    ("gpt-3.5-turbo-", "cl100k_base"),
    ("gpt-35-turbo-", "cl100k_base"),
    ("gpt-oss-", "o200k_harmony"),
    // fine-tuned
    ("ft:gpt-4o", "o200k_base"),
    ("ft:gpt-4", "cl100k_base"),
    ("ft:gpt-3.5-turbo", "cl100k_base"),
    ("ft:davinci-002", "cl100k_base"),
    ("ft:babbage-002", "cl100k_base"),
];

/// The name of the encoding `model` uses, or `None` for a model the tables do not know.
///
/// ```
/// use agentmsg_core::tokens::models::encoding_name_for_model;
/// assert_eq!(encoding_name_for_model("gpt-4.1-mini"), Some("o200k_base"));
/// assert_eq!(encoding_name_for_model("gpt-3.5-turbo-0125"), Some("cl100k_base"));
/// assert_eq!(encoding_name_for_model("llama"), None);
/// ```
pub fn encoding_name_for_model(model: &str) -> Option<&'static str> {
    let exact = MODEL_TO_ENCODING.iter().find(|(name, _)| *name == model);
    let prefixed = || MODEL_PREFIX_TO_ENCODING.iter().find(|(prefix, _)| model.starts_with(prefix));
    exact.or_else(prefixed).map(|&(_, encoding)| encoding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_name_wins_over_a_prefix() {
        // "gpt-5" is both a name and a prefix; "gpt-4" a name and the start of prefixes.
        assert_eq!(encoding_name_for_model("gpt-5"), Some("o200k_base"));
        assert_eq!(encoding_name_for_model("gpt-4"), Some("cl100k_base"));
        assert_eq!(encoding_name_for_model("gpt-4o-2024-08-06"), Some("o200k_base"));
        assert_eq!(encoding_name_for_model("ft:gpt-4o:org"), Some("o200k_base"));
        assert_eq!(encoding_name_for_model("ft:gpt-4:org"), Some("cl100k_base"));
        assert_eq!(encoding_name_for_model("gpt-oss-120b"), Some("o200k_harmony"));
        assert_eq!(encoding_name_for_model(""), None);
    }
}
