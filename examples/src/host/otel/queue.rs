//! A bounded batch span processor: ending a span only hands it to a queue, and one export
//! thread sends batches over OTLP. A full queue drops the span and counts it; an endpoint that
//! is down or slow costs that thread its timeouts, never a tool call.
//!
//! The SDK's own batch processor works the same way but keeps its drop count to itself; this
//! one reports it ([`ExportStats`]). The exporter is built and dropped on the export thread
//! (its blocking HTTP client must not live in the async runtime).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use opentelemetry::Context;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};

/// Spans waiting for export at most; more are dropped (and counted).
pub(crate) const MAX_QUEUED_SPANS: usize = 2_048;
/// Spans sent in one export request at most.
pub(crate) const MAX_BATCH_SPANS: usize = 512;
/// How long a span waits for its batch to fill before it is sent anyway.
pub(crate) const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// What the queue did: spans exported, dropped (queue full, or the export failed) and export
/// requests that failed.
#[derive(Debug, Default)]
pub struct ExportStats {
    exported: AtomicU64,
    dropped: AtomicU64,
    failed_exports: AtomicU64,
}

impl ExportStats {
    /// Spans the backend accepted.
    pub fn exported(&self) -> u64 {
        self.exported.load(Ordering::Relaxed)
    }

    /// Spans lost: the queue was full, or their export failed.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Export requests that failed (endpoint down, refused, timed out).
    pub fn failed_exports(&self) -> u64 {
        self.failed_exports.load(Ordering::Relaxed)
    }
}

enum Message {
    Span(Box<SpanData>),
    /// Export everything queued, then answer.
    Flush(SyncSender<()>),
}

/// The processor the tracer provider holds.
#[derive(Debug)]
pub(crate) struct BoundedSpanProcessor {
    sender: SyncSender<Message>,
    stats: Arc<ExportStats>,
}

impl BoundedSpanProcessor {
    /// Starts the export thread; `make_exporter` runs on it.
    pub(crate) fn start<E, F>(make_exporter: F) -> Self
    where
        E: SpanExporter + 'static,
        F: FnOnce() -> E + Send + 'static,
    {
        let (sender, receiver) = mpsc::sync_channel(MAX_QUEUED_SPANS);
        let stats = Arc::new(ExportStats::default());
        let thread_stats = Arc::clone(&stats);
        // Not joined: the thread ends when the provider drops the last sender, and one stuck on
        // a slow endpoint finishes on its own. Without it every span counts as dropped.
        let spawned = std::thread::Builder::new()
            .name("otlp-span-export".into())
            .spawn(move || export_loop(&make_exporter(), &receiver, &thread_stats));
        if let Err(error) = spawned {
            tracing::warn!(%error, "OTLP export thread not started; spans are dropped");
        }
        Self { sender, stats }
    }

    /// The counters, shared.
    pub(crate) fn stats(&self) -> Arc<ExportStats> {
        Arc::clone(&self.stats)
    }

    /// Sends what is queued and waits (at most `timeout`) for the export thread to answer.
    fn flush_within(&self, timeout: Duration) -> OTelSdkResult {
        let (done, answered) = mpsc::sync_channel(1);
        self.sender
            .send(Message::Flush(done))
            .map_err(|_| OTelSdkError::AlreadyShutdown)?;
        answered
            .recv_timeout(timeout)
            .map_err(|_| OTelSdkError::Timeout(timeout))
    }
}

impl SpanProcessor for BoundedSpanProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        match self.sender.try_send(Message::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.flush_within(Duration::from_secs(10))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.flush_within(timeout)
    }
}

/// Collects spans into batches and exports each when it is full or its first span has waited
/// [`FLUSH_INTERVAL`].
fn export_loop<E: SpanExporter>(exporter: &E, receiver: &Receiver<Message>, stats: &ExportStats) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(MAX_BATCH_SPANS);
    let mut deadline: Option<Instant> = None;
    loop {
        let wait = deadline.map_or(Duration::from_secs(3_600), |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        match receiver.recv_timeout(wait) {
            Ok(Message::Span(span)) => {
                batch.push(*span);
                deadline.get_or_insert_with(|| Instant::now() + FLUSH_INTERVAL);
                if batch.len() >= MAX_BATCH_SPANS {
                    export(exporter, &mut batch, stats);
                    deadline = None;
                }
            }
            Ok(Message::Flush(done)) => {
                export(exporter, &mut batch, stats);
                deadline = None;
                let _ = done.send(());
            }
            Err(RecvTimeoutError::Timeout) => {
                export(exporter, &mut batch, stats);
                deadline = None;
            }
            Err(RecvTimeoutError::Disconnected) => {
                export(exporter, &mut batch, stats);
                let _ = exporter.shutdown();
                return;
            }
        }
    }
}

fn export<E: SpanExporter>(exporter: &E, batch: &mut Vec<SpanData>, stats: &ExportStats) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::replace(batch, Vec::with_capacity(MAX_BATCH_SPANS));
    let count = u64::try_from(spans.len()).unwrap_or(u64::MAX);
    match futures::executor::block_on(exporter.export(spans)) {
        Ok(()) => {
            stats.exported.fetch_add(count, Ordering::Relaxed);
        }
        Err(error) => {
            stats.failed_exports.fetch_add(1, Ordering::Relaxed);
            stats.dropped.fetch_add(count, Ordering::Relaxed);
            tracing::debug!(%error, spans = count, "OTLP span export failed; the batch is dropped");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Tracer, TracerProvider as _};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use std::sync::Mutex;

    /// Keeps what it is sent, or fails every export; each export first takes `gate`, so a test
    /// holding it stalls the exporter.
    #[derive(Debug, Clone, Default)]
    struct Sink {
        spans: Arc<Mutex<Vec<String>>>,
        fail: bool,
        gate: Arc<Mutex<()>>,
    }

    impl SpanExporter for Sink {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let _stalled_until_released = self.gate.lock().unwrap();
            if self.fail {
                return Err(OTelSdkError::InternalFailure("endpoint down".into()));
            }
            let names = batch.into_iter().map(|span| span.name.into_owned());
            self.spans.lock().unwrap().extend(names);
            Ok(())
        }
    }

    fn provider(sink: Sink) -> (SdkTracerProvider, Arc<ExportStats>) {
        let processor = BoundedSpanProcessor::start(move || sink);
        let stats = processor.stats();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .build();
        (provider, stats)
    }

    #[test]
    fn ended_spans_are_exported_in_batches_and_counted() {
        let sink = Sink::default();
        let (provider, stats) = provider(sink.clone());
        let tracer = provider.tracer("test");
        for _ in 0..3 {
            tracer.in_span("work", |_| {});
        }
        provider.force_flush().unwrap();
        assert_eq!(*sink.spans.lock().unwrap(), ["work", "work", "work"]);
        assert_eq!((stats.exported(), stats.dropped()), (3, 0));
    }

    /// While the exporter is stuck (the test holds its gate), thousands of span ends still
    /// return: each only offers its span to the queue (a blocking end would hang this test).
    /// Past the queue and the batch in flight they are dropped and counted; once the endpoint
    /// answers with failures, every span is accounted for as dropped.
    #[test]
    fn a_stuck_or_failing_endpoint_drops_and_counts_and_never_blocks_span_ends() {
        let sink = Sink {
            fail: true,
            ..Sink::default()
        };
        let stalled = sink.gate.lock().unwrap();
        let (provider, stats) = provider(sink.clone());
        let tracer = provider.tracer("test");
        let spans = 4 * MAX_QUEUED_SPANS;
        for _ in 0..spans {
            tracer.in_span("work", |_| {});
        }
        let held = MAX_QUEUED_SPANS + 2 * MAX_BATCH_SPANS;
        assert!(
            stats.dropped() >= u64::try_from(spans - held).unwrap(),
            "{} dropped of {spans}",
            stats.dropped()
        );
        drop(stalled);
        let _ = provider.force_flush();
        assert!(stats.failed_exports() >= 1);
        assert_eq!(stats.exported(), 0);
        assert_eq!(stats.dropped(), u64::try_from(spans).unwrap());
    }
}
