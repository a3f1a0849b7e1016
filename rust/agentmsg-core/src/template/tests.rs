use super::*;

fn render(source: &str, context: Value) -> Result<String, TemplateError> {
    ChatTemplate::new(source)?.render(&context)
}

fn ctx(pairs: Vec<(&str, Value)>) -> Value {
    Value::from_pairs(pairs)
}

#[test]
fn prints_values_as_python() {
    let value = Value::from_pairs(vec![("a", Value::from(vec![Value::from(true), Value::from(())])), ("b", Value::from(1.5))]);
    let out = render("{{ v }}|{{ n }}|{{ f }}|{{ t }}|{{ v|string }}", ctx(vec![("v", value), ("n", Value::from(())), ("f", Value::from(1e16)), ("t", Value::from(false))])).unwrap();
    assert_eq!(out, "{'a': [True, None], 'b': 1.5}|None|1e+16|False|{'a': [True, None], 'b': 1.5}");
}

#[test]
fn tojson_is_json_dumps() {
    let value = Value::from_pairs(vec![("z", Value::from("é\n\"")), ("a", Value::from(vec![Value::from(1), Value::from(2.0)]))]);
    let c = || ctx(vec![("v", value.clone())]);
    assert_eq!(render("{{ v|tojson }}", c()).unwrap(), r#"{"z": "é\n\"", "a": [1, 2.0]}"#);
    assert_eq!(render("{{ v|tojson(indent=2) }}", c()).unwrap(), "{\n  \"z\": \"é\\n\\\"\",\n  \"a\": [\n    1,\n    2.0\n  ]\n}");
    assert_eq!(render("{{ v|tojson(sort_keys=true, ensure_ascii=true, separators=(',', ':')) }}", c()).unwrap(), r#"{"a":[1,2.0],"z":"\u00e9\n\""}"#);
    assert_eq!(render("{{ {}|tojson(indent=2) }}{{ []|tojson }}", c()).unwrap(), "{}[]");
}

#[test]
fn float_repr_matches_python() {
    for (x, text) in [(1.0, "1.0"), (0.1, "0.1"), (1e16, "1e+16"), (1.5e-5, "1.5e-05"), (123456.789, "123456.789"), (-0.0001, "-0.0001"), (1e15, "1000000000000000.0"), (f64::NAN, "nan")] {
        assert_eq!(python::float_repr(x), text);
    }
}

#[test]
fn raise_exception_is_typed() {
    let error = render("{% if true %}{{ raise_exception('no system role') }}{% endif %}", ctx(vec![])).unwrap_err();
    assert_eq!(error, TemplateError::Raised { message: "no system role".into() });
}

#[test]
fn syntax_errors_name_the_line() {
    let error = ChatTemplate::new("a\nb\n{% if %}").unwrap_err();
    assert!(matches!(error, TemplateError::Syntax { line: 3, .. }), "{error:?}");
    assert!(matches!(ChatTemplate::new("{% include 'x' %}"), Err(TemplateError::Syntax { .. })));
}

#[test]
fn unbounded_work_is_stopped() {
    let looping = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    assert!(matches!(render(looping, ctx(vec![])), Err(TemplateError::Limit { .. })));
    let doubling = "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}";
    let tight = Limits { fuel: 100_000, max_output_bytes: 1 << 20 };
    let doubled = ChatTemplate::with_limits(doubling, tight).unwrap().render(&ctx(vec![]));
    assert!(matches!(doubled, Err(TemplateError::Limit { .. })));
    let small = Limits { fuel: 1_000_000, max_output_bytes: 100 };
    let big = ChatTemplate::with_limits("{% for i in range(1000) %}xxxxxxxxxx{% endfor %}", small).unwrap();
    assert!(matches!(big.render(&ctx(vec![])), Err(TemplateError::Limit { .. })));
}

#[test]
fn python_methods_and_loop_controls() {
    let out = render(
        "{% for m in ['a</think>b', ' c '] %}{% if loop.first %}{{ m.split('</think>')[-1] }}{% continue %}{% endif %}[{{ m.strip() }}]{{ m.startswith(' ') }}{% break %}{% endfor %}{{ {'k': 1}.get('k') }}{{ 'a b  c'.rsplit(None, 1) }}",
        ctx(vec![]),
    )
    .unwrap();
    assert_eq!(out, "b[c]True1['a b', 'c']");
}

#[test]
fn whitespace_as_transformers_sets_it() {
    let source = "{% for m in messages %}\n  {{ m }}\n{% endfor %}\n";
    let out = render(source, ctx(vec![("messages", Value::from(vec!["a", "b"]))])).unwrap();
    assert_eq!(out, "  a\n  b\n");
    let gen = "x{%- generation -%} y {%- endgeneration %}z";
    assert_eq!(render(gen, ctx(vec![])).unwrap(), "xyz");
}

#[test]
fn chat_context_orders_and_refuses_repeats() {
    let value = chat_context(Value::from(Vec::<Value>::new()), None, true, vec![("bos_token".to_string(), Value::from("<s>"))]).unwrap();
    assert_eq!(render("{{ messages }}{{ tools }}{{ add_generation_prompt }}{{ bos_token }}", value).unwrap(), "[]NoneTrue<s>");
    assert!(chat_context(Value::from(()), None, true, vec![("messages".to_string(), Value::from(1))]).is_err());
}

#[test]
fn strftime_now_formats_the_year() {
    let out = render("{{ strftime_now('%Y') }}", ctx(vec![])).unwrap();
    assert_eq!(out.len(), 4);
}
