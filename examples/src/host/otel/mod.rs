//! OpenTelemetry export for the studio: `--otlp-endpoint URL` (or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) sends the libraries' spans (`invoke_agent`, `chat`,
//! `execute_tool`, MCP server spans) and metrics over OTLP/HTTP (protobuf). Without either,
//! nothing is installed and nothing is exported.
//!
//! Exporting never slows or fails a call: spans go through a bounded queue to one export
//! thread (`queue`), metrics through the SDK's periodic reader on its own thread. The
//! standard `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the service (default
//! `live-code-studio`); `OTEL_METRICS_EXPORTER=none` turns metrics off (for a backend that takes
//! traces only, such as Arize Phoenix).

pub(crate) mod queue;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::SpanExporter as _;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

use queue::{BoundedSpanProcessor, ExportStats};

/// The standard environment variable for the OTLP endpoint.
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// The service name when `OTEL_SERVICE_NAME` is unset.
pub const SERVICE_NAME: &str = "live-code-studio";
/// One export request's bound.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often metrics are sent.
pub const METRICS_INTERVAL: Duration = Duration::from_secs(10);

/// Where to export: the OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are appended).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpEndpoint(String);

impl OtlpEndpoint {
    /// The flag's value, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else none. A value that is not an
    /// `http(s)` URL is an error, not silently ignored.
    pub fn resolve(flag: Option<&str>) -> Result<Option<Self>, String> {
        let from_env = std::env::var(ENDPOINT_ENV).ok();
        let Some(value) = flag
            .map(str::to_owned)
            .or(from_env)
            .filter(|value| !value.trim().is_empty())
        else {
            return Ok(None);
        };
        Self::parse(&value).map(Some)
    }

    /// Checks `value` is an `http(s)` URL with a host.
    pub fn parse(value: &str) -> Result<Self, String> {
        let url = reqwest::Url::parse(value.trim())
            .map_err(|error| format!("OTLP endpoint {value:?} is not a URL: {error}"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(format!(
                "OTLP endpoint {value:?} must be an http:// or https:// URL (OTLP/HTTP)"
            ));
        }
        Ok(Self(url.as_str().trim_end_matches('/').to_owned()))
    }

    /// The URL of one signal (`traces`, `metrics`).
    pub fn signal_url(&self, signal: &str) -> String {
        format!("{}/v1/{signal}", self.0)
    }

    /// The base URL.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The installed exporters.
pub struct Telemetry {
    tracer: SdkTracerProvider,
    meter: Option<SdkMeterProvider>,
    stats: Arc<ExportStats>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("metrics", &self.meter.is_some())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Telemetry {
    /// Builds the span and metric pipelines to `endpoint` and makes the meter provider global
    /// (the libraries' metrics go through it).
    pub fn start(endpoint: &OtlpEndpoint) -> Result<Self, String> {
        let resource = resource();
        let traces_url = endpoint.signal_url("traces");
        let spans_resource = resource.clone();
        let processor =
            BoundedSpanProcessor::start(move || span_exporter(&traces_url, &spans_resource));
        let stats = processor.stats();
        let tracer = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource.clone())
            .build();
        let meter = metrics_enabled()
            .then(|| meter_provider(endpoint, resource))
            .transpose()?;
        if let Some(meter) = &meter {
            opentelemetry::global::set_meter_provider(meter.clone());
        }
        Ok(Self {
            tracer,
            meter,
            stats,
        })
    }

    /// The `tracing` layer that turns the libraries' spans into OpenTelemetry spans: only our
    /// crates' spans (their `info` spans), whatever the log filter says. The benchmark
    /// (`benches/benches/otel.rs`) measures this configuration.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let targets = Targets::new()
            .with_target("tool_context", tracing::Level::INFO)
            .with_target("tool_context_mcp", tracing::Level::INFO)
            .with_target("openrouter_tool_loop", tracing::Level::INFO)
            .with_target("live_code_studio", tracing::Level::INFO);
        // No source locations, thread ids or busy/idle clocks: attributes nobody asked for,
        // and the busy/idle clocks are two clock reads on every poll of a call.
        tracing_opentelemetry::layer()
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_tracer(self.tracer.tracer("live-code-studio"))
            .with_filter(targets)
    }

    /// Spans exported, dropped and failed export requests so far.
    pub fn stats(&self) -> &ExportStats {
        &self.stats
    }

    /// Sends what is queued (bounded by [`EXPORT_TIMEOUT`] per pipeline) and stops exporting.
    pub fn shutdown(&self) {
        let _ = self.tracer.shutdown_with_timeout(EXPORT_TIMEOUT);
        if let Some(meter) = &self.meter {
            let _ = meter.shutdown_with_timeout(EXPORT_TIMEOUT);
        }
        let stats = &self.stats;
        if stats.dropped() > 0 {
            tracing::warn!(
                exported = stats.exported(),
                dropped = stats.dropped(),
                failed_exports = stats.failed_exports(),
                "some spans were not exported"
            );
        }
    }
}

/// `service.name` from `OTEL_SERVICE_NAME` (else ours), plus `OTEL_RESOURCE_ATTRIBUTES`.
fn resource() -> Resource {
    let builder = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
        builder.build()
    } else {
        builder.with_service_name(SERVICE_NAME).build()
    }
}

fn metrics_enabled() -> bool {
    std::env::var("OTEL_METRICS_EXPORTER").map_or(true, |value| value.trim() != "none")
}

/// The OTLP/HTTP span exporter (built on the export thread: its blocking client must not
/// live in the async runtime). An exporter that cannot be built exports nothing and says so.
fn span_exporter(url: &str, resource: &Resource) -> OtlpSpans {
    let built = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(url)
        .with_timeout(EXPORT_TIMEOUT)
        .build();
    match built {
        Ok(mut exporter) => {
            // The provider gives its resource to its processors; ours holds the exporter here.
            exporter.set_resource(resource);
            OtlpSpans::Ready(Box::new(exporter))
        }
        Err(error) => {
            tracing::warn!(%error, "OTLP span exporter not built; spans are dropped");
            OtlpSpans::Unbuilt
        }
    }
}

/// The metric pipeline, built off the async runtime for the same reason as the spans'.
fn meter_provider(endpoint: &OtlpEndpoint, resource: Resource) -> Result<SdkMeterProvider, String> {
    let url = endpoint.signal_url("metrics");
    let exporter = std::thread::spawn(move || {
        opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_endpoint(url)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|error| format!("OTLP metric exporter: {error}"))
    })
    .join()
    .map_err(|_| "OTLP metric exporter panicked while being built".to_owned())??;
    let reader = PeriodicReader::builder(exporter)
        .with_interval(METRICS_INTERVAL)
        .build();
    Ok(SdkMeterProvider::builder()
        .with_reader(reader)
        .with_resource(resource)
        .build())
}

/// The span exporter, or the stand-in for one that could not be built: its exports fail (and
/// are counted as dropped).
#[derive(Debug)]
enum OtlpSpans {
    Ready(Box<opentelemetry_otlp::SpanExporter>),
    Unbuilt,
}

impl opentelemetry_sdk::trace::SpanExporter for OtlpSpans {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        match self {
            Self::Ready(exporter) => exporter.export(batch).await,
            Self::Unbuilt => Err(opentelemetry_sdk::error::OTelSdkError::InternalFailure(
                "the OTLP exporter could not be built".into(),
            )),
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        match self {
            Self::Ready(exporter) => exporter.shutdown_with_timeout(timeout),
            Self::Unbuilt => Ok(()),
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        if let Self::Ready(exporter) = self {
            exporter.set_resource(resource);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_http_urls_and_signals_append_their_path() {
        let endpoint = OtlpEndpoint::parse("http://127.0.0.1:6006/").unwrap();
        assert_eq!(endpoint.as_str(), "http://127.0.0.1:6006");
        assert_eq!(
            endpoint.signal_url("traces"),
            "http://127.0.0.1:6006/v1/traces"
        );
        for bad in [
            "127.0.0.1:4318",
            "grpc://collector:4317",
            "not a url",
            "file:///tmp/x",
        ] {
            assert!(OtlpEndpoint::parse(bad).is_err(), "{bad} is refused");
        }
    }
}
