//! Preview diagnostics: what a compiled document is missing, blocks or leaves out, with a
//! stable kind, the file and reference that caused it, and an optional source position.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// At most this many diagnostics are kept per compile; later ones are counted, not stored.
pub const MAX_PREVIEW_DIAGNOSTICS: usize = 100;

/// What went wrong. Serialized in kebab-case (`missing-reference`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticKind {
    /// A local stylesheet, script, module, import or asset that resolves to no workspace file.
    MissingReference,
    /// An external stylesheet, script, module or stylesheet import (blocked in the sandbox).
    BlockedExternalReference,
    /// A bare module specifier such as `react`: kept, but nothing in the preview provides it.
    UnsupportedModuleReference,
    /// An import past the module graph limit: it was neither inspected nor loaded.
    ModuleGraphLimit,
    /// A JavaScript module the parser rejected; its imports may be incomplete.
    ModuleSyntaxError,
    /// Inlining would exceed the output budget; the rest was left out (an error: the document
    /// is incomplete).
    OutputLimit,
}

impl DiagnosticKind {
    /// The kebab-case code, as serialized.
    pub fn code(self) -> &'static str {
        match self {
            Self::MissingReference => "missing-reference",
            Self::BlockedExternalReference => "blocked-external-reference",
            Self::UnsupportedModuleReference => "unsupported-module-reference",
            Self::ModuleGraphLimit => "module-graph-limit",
            Self::ModuleSyntaxError => "module-syntax-error",
            Self::OutputLimit => "output-limit",
        }
    }
}

/// What kind of reference a diagnostic is about; part of the message and of the dedup key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceLabel {
    /// `<link rel="stylesheet" href>`.
    Stylesheet,
    /// `<script src>`.
    Script,
    /// `import` / `export … from` / `import()` in a module.
    ModuleImport,
    /// `src`/`data`/`poster` on media tags and CSS `url()`.
    Asset,
    /// CSS `@import`.
    StylesheetImport,
}

impl ReferenceLabel {
    /// The label as it appears in messages (`stylesheet import`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stylesheet => "stylesheet",
            Self::Script => "script",
            Self::ModuleImport => "module import",
            Self::Asset => "asset",
            Self::StylesheetImport => "stylesheet import",
        }
    }
}

/// How serious a diagnostic is: errors break code or styles, warnings degrade the preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A stylesheet, script or module is missing or unparsable, or the output limit left
    /// content out.
    Error,
    /// Blocked externals, bare specifiers, missing assets and the module graph limit.
    Warning,
}

/// One diagnostic. `line`/`column` are 1-based positions in `source_path` when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PreviewDiagnostic {
    /// What went wrong.
    pub kind: DiagnosticKind,
    /// Which kind of reference, when the diagnostic is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<ReferenceLabel>,
    /// Error or warning.
    pub severity: Severity,
    /// The workspace file that holds the reference.
    pub source_path: String,
    /// The reference as written, trimmed.
    pub requested_path: String,
    /// 1-based line in `source_path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column (in characters) in `source_path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// Human-readable text, compatible with the reference messages.
    pub message: String,
}

/// A 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Position {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

impl Position {
    /// The position of byte `offset` in `source` (clamped to the source, snapped to a char).
    pub(crate) fn of_offset(source: &str, offset: usize) -> Self {
        #[cfg(test)]
        POSITIONS_COMPUTED.with(|count| count.set(count.get() + 1));
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        let line = before.bytes().filter(|byte| *byte == b'\n').count() + 1;
        let column = before[line_start..].chars().count() + 1;
        Self {
            line: saturate(line),
            column: saturate(column),
        }
    }
}

/// Where a diagnostic points, resolved to a [`Position`] only for a diagnostic that is kept:
/// each resolution scans the text before the offset, so resolving one per reference made a
/// compile quadratic in the references of a file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Location<'s> {
    source: &'s str,
    offset: usize,
}

/// A sink call a reusable piece made (see the compiler's `pieces`), replayed when it is reused.
#[derive(Debug, Clone)]
pub(crate) struct RecordedCall {
    kind: DiagnosticKind,
    /// `Some` for [`DiagnosticSink::reference`], `None` for [`DiagnosticSink::other`].
    label: Option<ReferenceLabel>,
    source_path: String,
    requested: String,
    /// The message of an [`DiagnosticSink::other`] call.
    message: String,
    /// `(text, byte offset)`: while recording, the text is the address of the source the
    /// location points into; [`RecordedCall::locate`] turns it into a file position.
    pub(crate) location: Option<(usize, usize)>,
}

impl RecordedCall {
    /// Replaces the recorded source address with `position(address)`; `false` when the
    /// location points into no workspace file (then the call cannot be replayed).
    pub(crate) fn locate(&mut self, position: impl Fn(usize) -> Option<usize>) -> bool {
        let Some((address, offset)) = self.location else {
            return true;
        };
        match position(address) {
            Some(found) => {
                self.location = Some((found, offset));
                true
            }
            None => false,
        }
    }

    /// Makes the call again on `sink`, its location in `source_of(file position)`.
    pub(crate) fn replay<'s>(
        &self,
        sink: &mut DiagnosticSink,
        source_of: impl Fn(usize) -> &'s str,
    ) {
        let location = self
            .location
            .map(|(file, offset)| Location::new(source_of(file), offset));
        match self.label {
            Some(label) => sink.reference(
                self.kind,
                label,
                &self.source_path,
                &self.requested,
                location,
            ),
            None => sink.other(
                self.kind,
                &self.source_path,
                &self.requested,
                location,
                self.message.clone(),
            ),
        }
    }
}

impl<'s> Location<'s> {
    /// Byte `offset` of `source`.
    pub(crate) fn new(source: &'s str, offset: usize) -> Self {
        Self { source, offset }
    }

    fn position(self) -> Position {
        Position::of_offset(self.source, self.offset)
    }
}

#[cfg(test)]
thread_local! {
    /// How many positions this thread computed: each costs a scan of the text before it.
    pub(crate) static POSITIONS_COMPUTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn saturate(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Collects diagnostics: drops duplicates (same source, label and reference) and stops storing
/// at [`MAX_PREVIEW_DIAGNOSTICS`], counting what it left out. A full list gives its last entry
/// up for the first error and for the first output-limit diagnostic, so the kept list never
/// hides that either occurred.
#[derive(Debug)]
pub(crate) struct DiagnosticSink {
    diagnostics: Vec<PreviewDiagnostic>,
    seen: HashSet<(String, &'static str, String)>,
    omitted: usize,
    /// The calls of the piece being rendered, when one is.
    recording: Option<Vec<RecordedCall>>,
    /// The module graph's edge limit, as graph-limit messages name it.
    module_edge_limit: usize,
}

impl Default for DiagnosticSink {
    fn default() -> Self {
        Self::with_module_edge_limit(super::modules::MAX_MODULE_IMPORT_EDGES)
    }
}

impl DiagnosticSink {
    /// A sink whose graph-limit messages name `module_edge_limit`.
    pub(crate) fn with_module_edge_limit(module_edge_limit: usize) -> Self {
        Self {
            diagnostics: Vec::new(),
            seen: HashSet::new(),
            omitted: 0,
            recording: None,
            module_edge_limit,
        }
    }

    /// Starts recording calls for a piece.
    pub(crate) fn start_recording(&mut self) {
        debug_assert!(self.recording.is_none(), "pieces do not nest");
        self.recording = Some(Vec::new());
    }

    /// The calls made since [`Self::start_recording`].
    pub(crate) fn stop_recording(&mut self) -> Vec<RecordedCall> {
        self.recording.take().unwrap_or_default()
    }

    fn record(
        &mut self,
        kind: DiagnosticKind,
        label: Option<ReferenceLabel>,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
        message: &str,
    ) {
        if let Some(calls) = &mut self.recording {
            calls.push(RecordedCall {
                kind,
                label,
                source_path: source_path.to_owned(),
                requested: requested.to_owned(),
                message: message.to_owned(),
                location: location
                    .map(|location| (location.source.as_ptr() as usize, location.offset)),
            });
        }
    }

    /// Records a reference diagnostic with the reference wording for its kind.
    pub(crate) fn reference(
        &mut self,
        kind: DiagnosticKind,
        label: ReferenceLabel,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
    ) {
        self.record(kind, Some(label), source_path, requested, location, "");
        let requested = requested.trim();
        let message = match kind {
            DiagnosticKind::BlockedExternalReference => {
                format!(
                    "External {} is blocked in the sandbox: {requested}",
                    label.as_str()
                )
            }
            DiagnosticKind::UnsupportedModuleReference => {
                format!(
                    "Bare module specifier is unavailable in the standalone preview: {requested}"
                )
            }
            DiagnosticKind::ModuleGraphLimit => format!(
                "JavaScript module graph limit ({}) reached; import was not inspected: {requested}",
                self.module_edge_limit
            ),
            _ => format!("Missing {}: {requested}", label.as_str()),
        };
        // The reference keys bare-specifier and graph-limit entries under their own labels.
        let dedup_label = match kind {
            DiagnosticKind::ModuleGraphLimit => "module graph limit",
            _ => label.as_str(),
        };
        let severity = severity_of(kind, label);
        self.push(
            dedup_label,
            PreviewDiagnostic {
                kind,
                label: Some(label),
                severity,
                source_path: source_path.to_owned(),
                requested_path: requested.to_owned(),
                line: None,
                column: None,
                message,
            },
            location,
        );
    }

    /// Records a diagnostic that is not about one reference (syntax errors, output budget).
    pub(crate) fn other(
        &mut self,
        kind: DiagnosticKind,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
        message: String,
    ) {
        self.record(kind, None, source_path, requested, location, &message);
        let severity = match kind {
            // Through `other`, an unsupported module is a bare import the installed packages
            // do not provide: the module that imports it cannot load.
            DiagnosticKind::ModuleSyntaxError
            | DiagnosticKind::OutputLimit
            | DiagnosticKind::UnsupportedModuleReference => Severity::Error,
            _ => Severity::Warning,
        };
        self.push_unlabelled(kind, severity, source_path, requested, location, message);
    }

    /// A warning about a package file (a `require` the preview cannot satisfy until it runs).
    /// Package modules render outside any recorded piece, so it is not recorded.
    pub(crate) fn package_warning(
        &mut self,
        kind: DiagnosticKind,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
        message: String,
    ) {
        let severity = Severity::Warning;
        self.push_unlabelled(kind, severity, source_path, requested, location, message);
    }

    fn push_unlabelled(
        &mut self,
        kind: DiagnosticKind,
        severity: Severity,
        source_path: &str,
        requested: &str,
        location: Option<Location<'_>>,
        message: String,
    ) {
        let diagnostic = PreviewDiagnostic {
            kind,
            label: None,
            severity,
            source_path: source_path.to_owned(),
            requested_path: requested.trim().to_owned(),
            line: None,
            column: None,
            message,
        };
        self.push(kind.code(), diagnostic, location);
    }

    /// Keeps `diagnostic` unless it is a duplicate or past the bound; only a kept one gets
    /// its `location` resolved.
    fn push(
        &mut self,
        label_key: &'static str,
        mut diagnostic: PreviewDiagnostic,
        location: Option<Location<'_>>,
    ) {
        let key = (
            diagnostic.source_path.clone(),
            label_key,
            diagnostic.requested_path.clone(),
        );
        if self.seen.contains(&key) {
            return;
        }
        if self.diagnostics.len() >= MAX_PREVIEW_DIAGNOSTICS {
            self.omitted += 1;
            if !self.outranks_a_full_list(&diagnostic) {
                return;
            }
            self.diagnostics.pop();
        }
        self.seen.insert(key);
        if let Some(position) = location.map(Location::position) {
            diagnostic.line = Some(position.line);
            diagnostic.column = Some(position.column);
        }
        self.diagnostics.push(diagnostic);
    }

    /// Whether `diagnostic` is the first error, or the first output-limit diagnostic, kept.
    fn outranks_a_full_list(&self, diagnostic: &PreviewDiagnostic) -> bool {
        let first = |matches: fn(&PreviewDiagnostic) -> bool| {
            matches(diagnostic) && !self.diagnostics.iter().any(matches)
        };
        first(|kept| kept.severity == Severity::Error)
            || first(|kept| kept.kind == DiagnosticKind::OutputLimit)
    }

    /// The kept diagnostics and how many were left out past the bound.
    pub(crate) fn finish(self) -> (Vec<PreviewDiagnostic>, usize) {
        (self.diagnostics, self.omitted)
    }
}

fn severity_of(kind: DiagnosticKind, label: ReferenceLabel) -> Severity {
    match (kind, label) {
        (DiagnosticKind::MissingReference, ReferenceLabel::Asset) => Severity::Warning,
        (DiagnosticKind::MissingReference | DiagnosticKind::ModuleSyntaxError, _) => {
            Severity::Error
        }
        _ => Severity::Warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_the_reference_wording() {
        let mut sink = DiagnosticSink::default();
        sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::StylesheetImport,
            "a.css",
            " b.css ",
            None,
        );
        sink.reference(
            DiagnosticKind::BlockedExternalReference,
            ReferenceLabel::Script,
            "index.html",
            "https://x/y.js",
            None,
        );
        sink.reference(
            DiagnosticKind::UnsupportedModuleReference,
            ReferenceLabel::ModuleImport,
            "app.js",
            "react",
            None,
        );
        sink.reference(
            DiagnosticKind::ModuleGraphLimit,
            ReferenceLabel::ModuleImport,
            "app.js",
            "./m.js",
            None,
        );
        let (diagnostics, omitted) = sink.finish();
        let messages: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Missing stylesheet import: b.css",
                "External script is blocked in the sandbox: https://x/y.js",
                "Bare module specifier is unavailable in the standalone preview: react",
                "JavaScript module graph limit (32) reached; import was not inspected: ./m.js",
            ]
        );
        assert_eq!(diagnostics[0].requested_path, "b.css");
        assert_eq!(diagnostics[0].severity, Severity::Error);
        assert_eq!(diagnostics[1].severity, Severity::Warning);
        assert_eq!(omitted, 0);
    }

    #[test]
    fn duplicates_are_dropped_by_source_label_and_reference() {
        let mut sink = DiagnosticSink::default();
        for _ in 0..3 {
            sink.reference(
                DiagnosticKind::MissingReference,
                ReferenceLabel::Asset,
                "a.css",
                "x.png",
                None,
            );
        }
        sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::Asset,
            "b.css",
            "x.png",
            None,
        );
        sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::Stylesheet,
            "a.css",
            "x.png",
            None,
        );
        assert_eq!(sink.finish().0.len(), 3);
    }

    #[test]
    fn the_list_is_bounded_exactly_at_the_limit() {
        let mut sink = DiagnosticSink::default();
        for index in 0..MAX_PREVIEW_DIAGNOSTICS {
            sink.reference(
                DiagnosticKind::MissingReference,
                ReferenceLabel::Asset,
                "a.css",
                &format!("{index}.png"),
                None,
            );
        }
        let full = sink.diagnostics.len();
        sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::Asset,
            "a.css",
            "one-over.png",
            None,
        );
        sink.reference(
            DiagnosticKind::MissingReference,
            ReferenceLabel::Asset,
            "a.css",
            "0.png",
            None,
        );
        let (diagnostics, omitted) = sink.finish();
        assert_eq!(full, MAX_PREVIEW_DIAGNOSTICS);
        assert_eq!(diagnostics.len(), MAX_PREVIEW_DIAGNOSTICS);
        assert_eq!(
            omitted, 1,
            "only the new one counts, the duplicate is dropped"
        );
    }

    #[test]
    fn a_full_list_of_warnings_gives_its_last_one_up_for_the_first_error_only() {
        let mut sink = DiagnosticSink::default();
        for index in 0..MAX_PREVIEW_DIAGNOSTICS {
            sink.reference(
                DiagnosticKind::MissingReference,
                ReferenceLabel::Asset,
                "a.css",
                &format!("{index}.png"),
                None,
            );
        }
        for requested in ["first", "second"] {
            let message = format!("left out: {requested}");
            sink.other(
                DiagnosticKind::OutputLimit,
                "index.html",
                requested,
                None,
                message,
            );
        }
        let (diagnostics, omitted) = sink.finish();
        assert_eq!(diagnostics.len(), MAX_PREVIEW_DIAGNOSTICS);
        let last = &diagnostics[MAX_PREVIEW_DIAGNOSTICS - 1];
        assert_eq!(
            (last.severity, last.requested_path.as_str()),
            (Severity::Error, "first")
        );
        assert_eq!(
            diagnostics[MAX_PREVIEW_DIAGNOSTICS - 2].requested_path,
            format!("{}.png", MAX_PREVIEW_DIAGNOSTICS - 2)
        );
        assert_eq!(omitted, 2, "the replaced warning and the second error");
    }

    #[test]
    fn a_full_list_of_errors_still_keeps_the_first_output_limit() {
        let mut sink = DiagnosticSink::default();
        for index in 0..=MAX_PREVIEW_DIAGNOSTICS {
            sink.reference(
                DiagnosticKind::MissingReference,
                ReferenceLabel::Script,
                "index.html",
                &format!("{index}.js"),
                None,
            );
        }
        let message = "left out: a.css".to_owned();
        sink.other(
            DiagnosticKind::OutputLimit,
            "index.html",
            "a.css",
            None,
            message,
        );
        let (diagnostics, omitted) = sink.finish();
        assert_eq!(diagnostics.len(), MAX_PREVIEW_DIAGNOSTICS);
        assert_eq!(
            diagnostics[MAX_PREVIEW_DIAGNOSTICS - 1].kind,
            DiagnosticKind::OutputLimit
        );
        assert_eq!(omitted, 2);
    }

    #[test]
    fn positions_are_one_based_lines_and_char_columns() {
        let source = "ab\ncé\nxyz";
        assert_eq!(
            Position::of_offset(source, 0),
            Position { line: 1, column: 1 }
        );
        assert_eq!(
            Position::of_offset(source, 3),
            Position { line: 2, column: 1 }
        );
        assert_eq!(
            Position::of_offset(source, 6),
            Position { line: 2, column: 3 }
        );
        assert_eq!(
            Position::of_offset(source, 5),
            Position { line: 2, column: 2 },
            "snapped to the char start"
        );
        assert_eq!(
            Position::of_offset(source, 999),
            Position { line: 3, column: 4 }
        );
    }
}
