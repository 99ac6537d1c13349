//! Human and JSON output of CLI results.

use serde_json::Value;

use super::{Command, KeysCommand};
use crate::catalogue::Catalogue;
use crate::store::backup::Summary;

pub fn result(command: &Command, value: &Value, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).unwrap_or_default()
        );
        return;
    }
    if let Command::Keys(KeysCommand::Create { .. } | KeysCommand::Rotate { .. }) = command
        && let Some(key) = value.get("key").and_then(Value::as_str)
    {
        println!("API key (shown once, store it now): {key}");
    }
    if let Command::Usage { .. } = command {
        return usage(value);
    }
    match value {
        Value::Array(rows) => table(rows, columns(command)),
        Value::Object(_) => fields(value),
        other => println!("{other}"),
    }
}

fn columns(command: &Command) -> &'static [&'static str] {
    match command {
        Command::Tenants(_) => &["id", "name", "tier", "walletBalance"],
        Command::Keys(_) => &[
            "id",
            "keyName",
            "state",
            "creditsConsumed",
            "creditLimit",
            "resetInterval",
            "hint",
        ],
        Command::Users(_) => &["id", "email", "role", "disabled"],
        _ => &["id"],
    }
}

fn usage(report: &Value) {
    let rows = report["data"].as_array().cloned().unwrap_or_default();
    table(
        &rows,
        &[
            "day",
            "keyId",
            "model",
            "endpoint",
            "requests",
            "promptTokens",
            "completionTokens",
            "cost",
        ],
    );
    let totals = &report["totals"];
    println!(
        "total: {} requests, {} credits ({} to {})",
        cell(totals.get("requests")),
        cell(totals.get("cost")),
        cell(report.get("from")),
        cell(report.get("to"))
    );
    for event in report["events"].as_array().into_iter().flatten() {
        println!(
            "event {} at {}: key {} at {}%",
            cell(event.get("event")),
            cell(event.get("timestamp")),
            cell(event["data"].get("keyId")),
            cell(event["data"].get("percentage"))
        );
    }
}

fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn table(rows: &[Value], columns: &[&str]) {
    if rows.is_empty() {
        println!("(none)");
        return;
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| columns.iter().map(|c| cell(r.get(*c))).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |items: Vec<String>| {
        let padded: Vec<String> = items
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(columns.iter().map(|c| c.to_string()).collect());
    for row in cells {
        line(row);
    }
}

fn fields(value: &Value) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            if k != "key" {
                println!("{k:<20} {}", cell(Some(v)));
            }
        }
    }
}

pub fn models(catalogue: &Catalogue, json: bool) {
    let rows: Vec<Value> = catalogue
        .models()
        .iter()
        .map(|m| {
            serde_json::json!({
                "id": m.id,
                "provider": m.provider.id,
                "kind": m.provider.kind.as_str(),
                "upstream": m.upstream,
                "input": m.input,
                "output": m.output,
                "contextWindow": m.context_window,
                "pricing": m.pricing.view(),
            })
        })
        .collect();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
    } else {
        table(
            &rows,
            &[
                "id",
                "provider",
                "kind",
                "upstream",
                "input",
                "output",
                "contextWindow",
            ],
        );
    }
}

pub fn summary(summary: &Summary) {
    println!("schema version {}", summary.schema_version);
    for (table, rows) in &summary.tables {
        println!("  {table:<16} {rows} rows");
    }
}
