//! The folder import limits (CONTRACT: 200 files, 2,000 scanned entries, 512 KiB per text
//! file, 4 MiB per asset, 12 MiB in total). Any traversal drives `ImportBuilder`; the input
//! is a script of traversal steps, one per line: a step byte (scan entries or offer a file),
//! a size byte and the entry's raw name. Whatever the script, the finished import stays
//! within every limit, holds only normalized, distinct, non-clashing paths of the right kind
//! in canonical order, and accounts for every skip.
#![no_main]

use std::cmp::Ordering;
use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use live_code_editor::FileContent;
use live_code_editor::file::{is_asset_path, is_text_path};
use live_code_editor::workspace::folder::{Admission, Candidate, SkipReason};
use live_code_editor::workspace::model::{compare_order, validate_path};
use live_code_editor::workspace::{
    FolderImport, ImportBuilder, MAX_ASSET_FILE_BYTES, MAX_IMPORT_FILES, MAX_IMPORT_TOTAL_BYTES,
    MAX_PATH_CHARS, MAX_TEXT_FILE_BYTES,
};

/// Sizes that sit on and around every limit.
const SIZES: [u64; 8] = [
    0,
    7,
    MAX_TEXT_FILE_BYTES - 1,
    MAX_TEXT_FILE_BYTES,
    MAX_TEXT_FILE_BYTES + 1,
    MAX_ASSET_FILE_BYTES,
    MAX_ASSET_FILE_BYTES + 1,
    MAX_IMPORT_TOTAL_BYTES,
];
/// Bytes one input may allocate for file contents, so a run stays fast.
const CONTENT_BUDGET: u64 = 3 * MAX_IMPORT_TOTAL_BYTES;

fuzz_target!(|data: &[u8]| {
    let mut builder = ImportBuilder::new("fuzz");
    let mut stopped = false;
    let mut added = 0;
    let mut allocated = 0;
    for step in data.split(|byte| *byte == b'\n') {
        let [op, size, name @ ..] = step else {
            continue;
        };
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        if op & 1 == 0 {
            let entries = usize::from(*size) * 16 + 1;
            for _ in 0..entries {
                let counted = builder.count_entry(name);
                assert!(!(stopped && counted), "an entry counted after the stop");
                stopped |= !counted;
            }
            continue;
        }
        let claimed = SIZES[usize::from(size & 7)];
        // The file may change between the size check and the read.
        let actual = if size & 8 == 0 {
            claimed
        } else {
            SIZES[usize::from((size >> 4) & 7)]
        };
        match builder.admit(name, claimed) {
            Admission::Read {
                path,
                kind,
                max_bytes,
            } => {
                assert!(!stopped, "a file admitted after the stop");
                assert_eq!(validate_path(name).as_ref(), Ok(&path));
                assert_eq!(max_bytes, limit_of(kind));
                assert!(
                    claimed <= max_bytes,
                    "admitted {claimed} bytes over {max_bytes}"
                );
                allocated += actual;
                if allocated > CONTENT_BUDGET {
                    return;
                }
                let bytes = content(actual, *op, kind);
                match builder.accept(path, kind, bytes) {
                    Admission::Added => added += 1,
                    Admission::Stop => stopped = true,
                    Admission::Skipped => {}
                    Admission::Read { .. } => panic!("accept asked for another read"),
                }
            }
            Admission::Stop => stopped = true,
            Admission::Skipped => assert!(!stopped, "a skip after the stop"),
            Admission::Added => panic!("admit added a file without reading it"),
        }
        assert_eq!(builder.stopped(), stopped);
    }
    let import = builder.finish();
    assert_eq!(import.files.len(), added);
    assert_within_limits(&import);
});

fn limit_of(kind: Candidate) -> u64 {
    match kind {
        Candidate::Text => MAX_TEXT_FILE_BYTES,
        Candidate::Asset => MAX_ASSET_FILE_BYTES,
    }
}

/// Contents of `size` bytes; the step byte's high bits plant a NUL or invalid UTF-8 in text.
fn content(size: u64, op: u8, kind: Candidate) -> Vec<u8> {
    let mut bytes = vec![b'a'; usize::try_from(size).expect("fits")];
    if kind == Candidate::Text && !bytes.is_empty() {
        let at = usize::from(op >> 3) % bytes.len();
        match (op >> 1) & 3 {
            1 => bytes[at] = 0,
            2 => bytes[at] = 0xff,
            _ => {}
        }
    }
    bytes
}

fn assert_within_limits(import: &FolderImport) {
    assert!(
        import.files.len() <= MAX_IMPORT_FILES,
        "{} files",
        import.files.len()
    );
    let mut total = 0u64;
    let mut paths = BTreeSet::new();
    for file in &import.files {
        let path = &file.path;
        assert_eq!(
            validate_path(path).as_ref(),
            Ok(path),
            "stored path is not normal"
        );
        assert!(path.chars().count() <= MAX_PATH_CHARS);
        assert!(paths.insert(path.as_str()), "duplicate path {path:?}");
        let size = match &file.content {
            FileContent::Text { source } => {
                assert!(is_text_path(path), "{path:?} stored as text");
                assert!(!source.contains('\0'), "{path:?} keeps a NUL");
                source.len() as u64
            }
            FileContent::Asset { bytes, .. } => {
                assert!(
                    !is_text_path(path) && is_asset_path(path),
                    "{path:?} stored as asset"
                );
                bytes.len() as u64
            }
        };
        let limit = if file.is_asset() {
            MAX_ASSET_FILE_BYTES
        } else {
            MAX_TEXT_FILE_BYTES
        };
        assert!(size <= limit, "{path:?} has {size} bytes over {limit}");
        total += size;
    }
    assert!(total <= MAX_IMPORT_TOTAL_BYTES, "{total} bytes imported");
    for a in &paths {
        for b in &paths {
            let inside = |inner: &str, outer: &str| {
                inner
                    .strip_prefix(outer)
                    .is_some_and(|rest| rest.starts_with('/'))
            };
            assert!(
                !inside(a, b),
                "{a:?} needs a folder where the file {b:?} is"
            );
        }
    }
    for pair in import.files.windows(2) {
        assert_eq!(
            compare_order(&pair[0].path, &pair[1].path),
            Ordering::Less,
            "files out of canonical order"
        );
    }
    let counted: usize = import.skip_counts.values().sum();
    assert_eq!(
        counted,
        import.skipped.len(),
        "skip counts disagree with the list"
    );
    let reasons = [
        SkipReason::Unsupported,
        SkipReason::FileLimit,
        SkipReason::Duplicate,
        SkipReason::FolderClash,
        SkipReason::TextTooLarge,
        SkipReason::AssetTooLarge,
        SkipReason::WorkspaceLimit,
        SkipReason::Binary,
        SkipReason::InvalidPath,
        SkipReason::ScanLimit,
    ];
    for line in &import.skipped {
        assert!(
            reasons
                .iter()
                .any(|reason| line.ends_with(&format!(" · {}", reason.as_str()))),
            "unknown skip line {line:?}"
        );
    }
}
