//! What a finished local run answers, from the result of its last call: the file it read
//! (bounded), the status it read, the file it hands over, or what it did. A read request
//! therefore shows what was read instead of only naming the tool.

use serde_json::Value;

use super::outcome::{HandedFile, RunOutcome};

/// Most characters of a file shown in a reply; the rest is counted, not shown.
pub(crate) const MAX_SHOWN_CHARS: usize = 4_000;
/// Largest download (encoded) a run hands to the page in its report.
pub(crate) const MAX_HANDED_BYTES: usize = 1024 * 1024;
/// Most paths listed in a status summary.
const MAX_LISTED_PATHS: usize = 10;

/// The outcome of a run whose last call was `tool` with structured result `result`.
pub(crate) fn completed(tool: &str, result: Option<&Value>, revision: Option<u64>) -> RunOutcome {
    let result = result.unwrap_or(&Value::Null);
    match tool {
        "workspace.readFile" | "web.readFile" | "editor.getDocument" => {
            RunOutcome::completed(shown_file(result))
        }
        "workspace.getStatus" | "editor.getStatus" | "web.getWorkspace" => {
            RunOutcome::completed(status_summary(result))
        }
        "workspace.downloadFile" => handed_over(result),
        _ => RunOutcome::completed(match revision {
            Some(revision) => format!("Done: {tool} (workspace revision {revision})."),
            None => format!("Done: {tool}."),
        }),
    }
}

/// `path · N characters · revision R`, then the source up to [`MAX_SHOWN_CHARS`].
fn shown_file(result: &Value) -> String {
    let text = |name: &str| result.get(name).and_then(Value::as_str);
    let path = text("path")
        .or_else(|| text("activePath"))
        .unwrap_or("file");
    let source = text("source").unwrap_or_default();
    let total = source.chars().count();
    let revision = ["revision", "documentRevision"]
        .iter()
        .find_map(|field| result.get(*field).and_then(Value::as_u64))
        .map(|revision| format!(" · revision {revision}"))
        .unwrap_or_default();
    let mut reply = format!("{path} · {total} characters{revision}\n\n");
    reply.extend(source.chars().take(MAX_SHOWN_CHARS));
    if total > MAX_SHOWN_CHARS {
        reply.push_str(&format!(
            "\n… {} more characters not shown; open the file to see all of it.",
            total - MAX_SHOWN_CHARS
        ));
    }
    reply
}

/// One line per fact a status result reports (revisions, files, unsaved paths, preview,
/// folder, storage), whichever surface it comes from.
fn status_summary(result: &Value) -> String {
    let number = |name: &str| result.get(name).and_then(Value::as_u64);
    let mut clocks = Vec::new();
    for (field, label) in [
        ("revision", "Workspace revision"),
        ("workspaceRevision", "Workspace revision"),
        ("documentRevision", "document revision"),
    ] {
        if let Some(value) = number(field) {
            clocks.push(format!("{label} {value}"));
        }
    }
    let files = number("fileCount").or_else(|| {
        result
            .get("files")
            .and_then(Value::as_array)
            .map(|files| files.len() as u64)
    });
    if let Some(files) = files {
        clocks.push(format!("{files} files"));
    }
    if let Some(active) = result.get("activePath").and_then(Value::as_str) {
        clocks.push(format!("active {active}"));
    }
    let mut lines = vec![clocks.join(" · ")];
    if let Some(dirty) = result.get("dirtyPaths").and_then(Value::as_array) {
        lines.push(match listed(dirty) {
            Some(paths) => format!("Unsaved: {paths}"),
            None => "Nothing unsaved.".to_owned(),
        });
    }
    if let Some(preview) = result.get("preview") {
        let status = preview
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let revision = preview.get("revision").and_then(Value::as_u64).unwrap_or(0);
        lines.push(format!("Preview: revision {revision} {status}"));
    }
    if let Some(folder) = result.get("folder") {
        lines.push(folder_line(folder));
    }
    if let Some(mode) = result.get("storageMode").and_then(Value::as_str) {
        let error = result.get("storageError").and_then(Value::as_str);
        lines.push(match error {
            Some(error) => format!("Storage: {mode} ({error})"),
            None => format!("Storage: {mode}"),
        });
    }
    lines.retain(|line| !line.is_empty());
    lines.join("\n")
}

/// Up to [`MAX_LISTED_PATHS`] paths, comma-separated, with the count of the rest.
fn listed(paths: &[Value]) -> Option<String> {
    let names: Vec<&str> = paths.iter().filter_map(Value::as_str).collect();
    if names.is_empty() {
        return None;
    }
    let mut text = names
        .iter()
        .take(MAX_LISTED_PATHS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_LISTED_PATHS {
        text.push_str(&format!(" and {} more", names.len() - MAX_LISTED_PATHS));
    }
    Some(text)
}

fn folder_line(folder: &Value) -> String {
    if folder.get("connected").and_then(Value::as_bool) != Some(true) {
        return "Folder: not linked (saves go to the browser checkpoint).".to_owned();
    }
    let name = folder
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("linked");
    let permission = folder
        .get("permission")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    format!("Folder: {name} (write permission {permission})")
}

/// The downloaded file handed to the page, or why it is not: it is too large for a report.
fn handed_over(result: &Value) -> RunOutcome {
    let Ok(file) = serde_json::from_value::<HandedFile>(result.clone()) else {
        return RunOutcome::completed("workspace.downloadFile returned no file to hand over.");
    };
    let size = result.get("sizeBytes").and_then(Value::as_u64).unwrap_or(0);
    if file.content.len() > MAX_HANDED_BYTES {
        return RunOutcome::completed(format!(
            "{} is {size} bytes, more than the chat hands over (1 MB). Download it with the Download button above the editor instead.",
            file.file_name
        ));
    }
    RunOutcome::Completed {
        message: format!("Downloaded {} ({size} bytes).", file.file_name),
        download: Some(file),
        actions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(outcome: &RunOutcome) -> &str {
        match outcome {
            RunOutcome::Completed { message, .. } => message,
            other => panic!("not completed: {other:?}"),
        }
    }

    #[test]
    fn a_read_shows_the_file_bounded() {
        let read = json!({"path": "app.js", "source": "let a = 1;\n", "revision": 4});
        let outcome = completed("workspace.readFile", Some(&read), Some(4));
        assert_eq!(
            message(&outcome),
            "app.js · 11 characters · revision 4\n\nlet a = 1;\n"
        );
        let long = json!({"path": "big.js", "source": "x".repeat(MAX_SHOWN_CHARS + 5)});
        let shown = completed("web.readFile", Some(&long), None);
        assert!(
            message(&shown)
                .ends_with("… 5 more characters not shown; open the file to see all of it.")
        );
        assert!(message(&shown).len() < MAX_SHOWN_CHARS + 200);
        let document = json!({"activePath": "index.html", "source": "<p>", "documentRevision": 7});
        assert!(
            message(&completed("editor.getDocument", Some(&document), None))
                .starts_with("index.html · 3 characters · revision 7")
        );
    }

    #[test]
    fn a_status_read_summarizes_the_status() {
        let status = json!({
            "revision": 5, "activePath": "index.html", "fileCount": 3,
            "dirtyPaths": ["styles.css"], "preview": {"revision": 5, "status": "ready"},
            "folder": {"connected": false, "permission": "disconnected"}, "storageMode": "sqlite"
        });
        assert_eq!(
            message(&completed("workspace.getStatus", Some(&status), Some(5))),
            "Workspace revision 5 · 3 files · active index.html\nUnsaved: styles.css\nPreview: revision 5 ready\nFolder: not linked (saves go to the browser checkpoint).\nStorage: sqlite"
        );
        let web = json!({"revision": 2, "activePath": "index.html", "files": [{}, {}, {}],
            "preview": {"revision": 2, "status": "compiled"}, "storageMode": "memory"});
        assert_eq!(
            message(&completed("web.getWorkspace", Some(&web), Some(2))),
            "Workspace revision 2 · 3 files · active index.html\nPreview: revision 2 compiled\nStorage: memory"
        );
        let paths: Vec<String> = (0..12).map(|n| format!("f{n}.js")).collect();
        let many = json!({"dirtyPaths": paths});
        assert!(
            message(&completed("editor.getStatus", Some(&many), None))
                .ends_with("f9.js and 2 more")
        );
    }

    #[test]
    fn a_download_hands_the_file_over_unless_too_large() {
        let file = json!({"path": "index.html", "fileName": "index.html", "mimeType": "text/html",
            "encoding": "utf-8", "content": "<h1>", "sizeBytes": 4, "revision": 2});
        let RunOutcome::Completed {
            message, download, ..
        } = completed("workspace.downloadFile", Some(&file), Some(2))
        else {
            panic!("completed");
        };
        assert_eq!(message, "Downloaded index.html (4 bytes).");
        assert_eq!(download.unwrap().content, "<h1>");
        let mut big = file.clone();
        big["content"] = json!("x".repeat(MAX_HANDED_BYTES + 1));
        let RunOutcome::Completed {
            message, download, ..
        } = completed("workspace.downloadFile", Some(&big), Some(2))
        else {
            panic!("completed");
        };
        assert!(download.is_none());
        assert!(
            message.contains("more than the chat hands over"),
            "{message}"
        );
        assert_eq!(
            message_of_done(),
            "Done: workspace.undo (workspace revision 3)."
        );
    }

    fn message_of_done() -> String {
        message(&completed("workspace.undo", None, Some(3))).to_owned()
    }
}
