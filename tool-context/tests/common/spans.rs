//! A `tracing` layer that keeps every closed span's name, parent and fields, for tests that
//! check the spans a call or a run makes (shared by the crates' telemetry tests).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A closed span: its metadata name and every field recorded on it, as text.
#[derive(Debug, Clone)]
pub struct Captured {
    pub name: &'static str,
    pub parent: Option<&'static str>,
    pub fields: BTreeMap<String, String>,
}

impl Captured {
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }
}

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    /// Marked: `tracing-opentelemetry` exports an unsigned field as text, not as an integer,
    /// so a test that expects a number sees the difference.
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value} (u64, exported as text)"),
        );
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// Keeps the fields of every span and hands over each span as it closes.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<Captured>>>);

impl Capture {
    pub fn closed(&self) -> Vec<Captured> {
        self.0.lock().unwrap().clone()
    }

    /// The one closed span, failing when there are more or none.
    pub fn only(&self) -> Captured {
        let closed = self.closed();
        assert_eq!(closed.len(), 1, "one call is one span: {closed:?}");
        closed[0].clone()
    }
}

impl Capture {
    /// The closed spans exported under `otel_name`.
    pub fn named(&self, otel_name: &str) -> Vec<Captured> {
        let closed = self.closed();
        closed
            .into_iter()
            .filter(|span| span.get("otel.name") == Some(otel_name))
            .collect()
    }
}

impl<S> tracing_subscriber::Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        attrs.record(&mut fields);
        ctx.span(id).unwrap().extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let mut extensions = span.extensions_mut();
        values.record(extensions.get_mut::<Fields>().unwrap());
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        let fields = span.extensions_mut().remove::<Fields>().unwrap().0;
        self.0.lock().unwrap().push(Captured {
            name: span.name(),
            parent: span.parent().map(|parent| parent.name()),
            fields,
        });
    }
}

pub fn capture() -> (Capture, tracing::subscriber::DefaultGuard) {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let guard = tracing::subscriber::set_default(subscriber);
    (capture, guard)
}
