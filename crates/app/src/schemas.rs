//! The JSON Schemas of every document leakscope writes, made from the models' own types, so
//! that they cannot drift from the code: `docs/schemas/` holds them, and a test holds those
//! files to these and every command's output to its schema.

use schemars::JsonSchema;

/// A `--json` document: the command's model, and what every document adds.
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Document<T> {
    #[serde(flatten)]
    body: T,
    /// The version of leakscope's JSON documents (`report::SCHEMA_VERSION`).
    schema_version: u32,
    /// Commands that read dumps: their warnings, one line each.
    #[serde(default)]
    warnings: Option<Vec<String>>,
    /// Commands that read dumps: where a truncated one was cut, or null.
    #[serde(default)]
    truncated_at: Option<u64>,
}

fn document<T: JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Document<T>)).unwrap_or_default()
}

/// Each command's `--json` document schema, by command name, and `summary` (the file
/// `leakscope summary` writes).
pub fn all() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("histogram", document::<report::Histogram>()),
        ("info", document::<report::DumpInfo>()),
        ("dominators", document::<report::DominatorReport>()),
        ("retained", document::<report::RetainedReport>()),
        ("paths", document::<report::PathsReport>()),
        ("object", document::<report::ObjectView>()),
        ("roots", document::<report::RootsReport>()),
        ("group", document::<report::GroupReport>()),
        ("suspects", document::<report::SuspectsReport>()),
        ("growth", document::<report::GrowthReport>()),
        ("diff", document::<report::DiffReport>()),
        ("report", document::<report::LeakReport>()),
        ("check", document::<report::ExpectationsReport>()),
        ("stale", document::<report::StaleReport>()),
        ("top", document::<report::TopView>()),
        ("jvms", document::<report::JvmList>()),
        ("sql", document::<report::SqlAnswer>()),
        ("redact", document::<report::RedactReport>()),
        ("secrets", document::<report::SecretsReport>()),
        ("summary", serde_json::to_value(schemars::schema_for!(growth::HeapSummary)).unwrap_or_default()),
    ]
}
