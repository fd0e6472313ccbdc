//! Reads spans back from a real Arize Phoenix, the OpenTelemetry backend `scripts/test.sh` starts
//! (one server per run, with an empty database) and exports as `PHOENIX_URL`.
//!
//! # Sending spans
//!
//! Phoenix takes OTLP/HTTP at [`otlp_traces_endpoint`] (`$PHOENIX_URL/v1/traces`), protobuf only
//! (`application/x-protobuf`, plain, gzip or deflate; OTLP/JSON answers 415), answering as soon as
//! the request is queued: a span shows up in reads about a second later. It keeps traces only:
//! OTLP metrics and logs are not collected (`POST /v1/metrics` and `POST /v1/logs` answer 405), so
//! an exporter under test should send traces alone.
//!
//! # Isolation: one project per test
//!
//! All tests share the server, so each test sends its spans to a project of its own, named with
//! [`unique_project`]. Phoenix picks a span's project, first match wins, from:
//!
//! 1. the `x-project-name` HTTP header of the OTLP/HTTP export request;
//! 2. the `openinference.project.name` attribute of the span's OTLP *resource* (not of the span);
//! 3. otherwise the project `default`.
//!
//! The resource attribute is the usual route (`Resource` with
//! `KeyValue::new("openinference.project.name", project)`); the header fits an exporter whose
//! resource is fixed. The project is created by the first span that names it, so until then
//! reading it answers 404, which [`wait_for_spans`] treats as "no spans yet". A trace id belongs
//! to one project (Phoenix keeps trace ids unique across projects).
//!
//! # What comes back
//!
//! Phoenix stores each span's name, ids, times, status and attributes; it drops the OTel span kind
//! (`SPAN_KIND_CLIENT`, …) and the resource attributes. Its own span kind is the OpenInference one
//! (`LLM`, `TOOL`, `AGENT`, `CHAIN`, …, `UNKNOWN`), taken from the `openinference.span.kind`
//! attribute, which Phoenix also infers from `gen_ai.*` attributes: a span with
//! `gen_ai.operation.name = "execute_tool"` comes back as `TOOL`, with `tool.name` / `tool.id`
//! added next to `gen_ai.tool.name` / `gen_ai.tool.call.id`. The values of a few OpenInference
//! attributes holding JSON strings (`metadata`, `tool.parameters`, …) are parsed and come back
//! flattened under their key (`metadata.user`); other string attributes come back as sent.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The longest page Phoenix's span listing serves.
const PAGE_LIMIT: &str = "1000";
/// How long [`wait_for_spans`] sleeps between two reads.
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// A generous bound for [`wait_for_spans`]: Phoenix usually shows a span within a second of its
/// export, but the suite runs on small, busy machines.
pub const SPAN_TIMEOUT: Duration = Duration::from_secs(30);

/// One span as Phoenix stores it (`GET /v1/projects/{project}/spans`).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The span name.
    pub name: String,
    /// The OTel span id, 16 lowercase hex digits.
    pub span_id: String,
    /// The OTel trace id, 32 lowercase hex digits.
    pub trace_id: String,
    /// The parent's span id; `None` for a root span.
    pub parent_span_id: Option<String>,
    /// The OpenInference span kind (`TOOL`, `LLM`, `AGENT`, `CHAIN`, …, `UNKNOWN`), not the OTel
    /// span kind, which Phoenix does not keep.
    pub span_kind: String,
    /// `OK`, `ERROR` or `UNSET`.
    pub status_code: String,
    /// The status message; empty when none was set.
    pub status_message: String,
    /// The start time, RFC 3339 in UTC with microseconds (`2026-12-03T18:25:12.855621+00:00`).
    pub start_time: String,
    /// The end time, in the same format as [`Span::start_time`].
    pub end_time: String,
    /// The attributes keyed by their dotted OTel name (`gen_ai.tool.name`); arrays stay arrays.
    pub attributes: BTreeMap<String, Value>,
}

impl Span {
    /// The attribute `key` when it is a string.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// Whether this span has no parent.
    pub fn is_root(&self) -> bool {
        self.parent_span_id.is_none()
    }

    /// Reads one element of the `data` array Phoenix answers with.
    fn from_json(span: &Value) -> Self {
        let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
        let mut attributes = BTreeMap::new();
        flatten_into("", &span["attributes"], &mut attributes);
        Self {
            name: text("name"),
            span_id: span["context"]["span_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            trace_id: span["context"]["trace_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            parent_span_id: span["parent_id"].as_str().map(str::to_owned),
            span_kind: text("span_kind"),
            status_code: text("status_code"),
            status_message: text("status_message"),
            start_time: text("start_time"),
            end_time: text("end_time"),
            attributes,
        }
    }
}

/// Phoenix's base URL from `PHOENIX_URL`, without a trailing slash.
///
/// # Panics
///
/// When `PHOENIX_URL` is unset or empty: these tests need a real Phoenix and never skip.
pub fn phoenix_url() -> String {
    match std::env::var("PHOENIX_URL") {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_owned(),
        _ => panic!(
            "PHOENIX_URL is not set: run scripts/test.sh, which installs Arize Phoenix (cached \
             under ~/.cache/tool-calling-phoenix), starts it on a free loopback port and exports \
             PHOENIX_URL; these tests need a real Phoenix and never skip"
        ),
    }
}

/// Where an OTLP/HTTP (protobuf) trace exporter sends its spans: `$PHOENIX_URL/v1/traces`.
pub fn otlp_traces_endpoint() -> String {
    format!("{}/v1/traces", phoenix_url())
}

/// A project name no other test (or earlier run against the same server) uses: `prefix`, this
/// process id, and a per-process counter and clock reading.
pub fn unique_project(prefix: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_nanos();
    format!("{prefix}-{}-{n}-{nanos}", std::process::id())
}

/// Polls the project's spans until `done` accepts them, and returns them (by start time).
///
/// A project that does not exist yet counts as one without spans.
///
/// # Panics
///
/// When `timeout` passes first, with the spans seen last (or the last error) in the message.
pub async fn wait_for_spans(
    project: &str,
    done: impl Fn(&[Span]) -> bool,
    timeout: Duration,
) -> Vec<Span> {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + timeout;
    loop {
        let last = match project_spans(&client, project).await {
            Ok(spans) if done(&spans) => return spans,
            Ok(spans) => format!("{} span(s): {:?}", spans.len(), names(&spans)),
            Err(error) => error,
        };
        if Instant::now() >= deadline {
            panic!(
                "Phoenix project {project:?} did not get the expected spans in {timeout:?}; \
                 last read: {last}"
            );
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Polls until the project has at least `count` spans (within [`SPAN_TIMEOUT`]), and returns
/// them by start time.
pub async fn wait_for_span_count(project: &str, count: usize) -> Vec<Span> {
    wait_for_spans(project, |spans| spans.len() >= count, SPAN_TIMEOUT).await
}

/// All spans of the project by start time, a parent before its children (every page of
/// `GET /v1/projects/{project}/spans?sort=start_time&order=asc`); no spans when the project does
/// not exist yet. The error describes a failed read.
pub async fn project_spans(client: &reqwest::Client, project: &str) -> Result<Vec<Span>, String> {
    let mut spans = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = api_url(&["v1", "projects", project, "spans"]);
        url.query_pairs_mut()
            .append_pair("limit", PAGE_LIMIT)
            .append_pair("sort", "start_time")
            .append_pair("order", "asc");
        if let Some(cursor) = &cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let Some(page) = get_json(client, url).await? else {
            return Ok(spans);
        };
        let data = page["data"]
            .as_array()
            .ok_or_else(|| format!("no data array in Phoenix's answer: {page}"))?;
        spans.extend(data.iter().map(Span::from_json));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(spans),
        }
    }
}

/// The Phoenix UI page that shows one trace (its span tree and the root span's details):
/// `$PHOENIX_URL/projects/<project id>/traces/<trace id>`, where the project id is Phoenix's
/// GraphQL id of the project (`GET /v1/projects/{project}` answers it).
///
/// The page is a JavaScript app: headless Chromium needs a few seconds of (virtual) time before
/// it shows the trace, e.g. `--virtual-time-budget=5000` for a `--screenshot`.
///
/// # Panics
///
/// When the project does not exist (no span named it yet) or Phoenix does not answer.
pub async fn trace_view_url(project: &str, trace_id: &str) -> String {
    let client = reqwest::Client::new();
    let project_json = get_json(&client, api_url(&["v1", "projects", project]))
        .await
        .unwrap_or_else(|error| panic!("reading Phoenix project {project:?}: {error}"))
        .unwrap_or_else(|| panic!("Phoenix has no project {project:?}: no span named it yet"));
    let id = project_json["data"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no project id in Phoenix's answer: {project_json}"));
    api_url(&["projects", id, "traces", trace_id]).to_string()
}

/// `$PHOENIX_URL` with the given path segments appended (each percent-encoded).
fn api_url(segments: &[&str]) -> reqwest::Url {
    let mut url = reqwest::Url::parse(&phoenix_url()).expect("PHOENIX_URL is a valid URL");
    url.path_segments_mut()
        .expect("PHOENIX_URL is an http(s) URL")
        .pop_if_empty()
        .extend(segments);
    url
}

/// GETs JSON from Phoenix: `Ok(None)` on 404, an error string on any other failure.
async fn get_json(client: &reqwest::Client, url: reqwest::Url) -> Result<Option<Value>, String> {
    let response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(format!("GET {url}: {status}: {body}"));
    }
    response
        .json()
        .await
        .map(Some)
        .map_err(|error| format!("GET {url}: invalid JSON: {error}"))
}

/// Copies `value` into `out` with nested objects flattened to dotted keys under `prefix`.
fn flatten_into(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let key = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten_into(&key, field, out);
            }
        }
        _ if prefix.is_empty() => {}
        other => {
            out.insert(prefix.to_owned(), other.clone());
        }
    }
}

/// The span names, for failure messages.
fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|span| span.name.as_str()).collect()
}
