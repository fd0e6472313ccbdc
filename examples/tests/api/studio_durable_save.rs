//! Durable `workspace.saveAll` side effects through the studio registry, with a
//! fault-injecting folder.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use live_code_editor::workspace::ImportGuard;
use live_code_editor::workspace::folder::FolderAdapter;
use live_code_editor::workspace::manager::WriteOptions;
use live_code_editor::workspace::os_folder::{FolderFs, OsFs};
use live_code_studio::host::{self, StudioOptions, StudioState};
use live_code_studio::kit::durable_folder::{
    DURABLE_OPERATIONS_DB_FILE, DurableFolder, DurableSaves, MAX_SAVE_GENERATIONS, content_digest,
    delete_key, write_key,
};
use serde_json::{Value, json};
use tool_context::ToolCallOptions;
use tool_durable_operations::OperationState;
use tool_protocol::{ToolCallContext, ToolCallMode, ToolCallSource};

use crate::support::http::error_of;

/// What the next rename does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// The rename happens, then reports an I/O error (the bytes landed).
    ErrorAfterRename,
    /// The rename reports an I/O error without renaming (the bytes did not land).
    ErrorInsteadOfRename,
    /// Creating the temporary file is refused by the OS (a confirmed pre-write refusal).
    DenyWrite,
    /// The removal happens, then reports an I/O error.
    ErrorAfterRemove,
    /// The rename waits until the test opens the gate.
    Hold,
}

#[derive(Debug)]
struct FaultFs {
    fault: Mutex<Fault>,
    gate: (Mutex<bool>, Condvar),
}

impl FaultFs {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            fault: Mutex::new(Fault::None),
            gate: (Mutex::new(false), Condvar::new()),
        })
    }

    fn set(&self, fault: Fault) {
        *self.fault.lock().unwrap() = fault;
    }

    fn fault(&self) -> Fault {
        *self.fault.lock().unwrap()
    }

    fn open_gate(&self) {
        *self.gate.0.lock().unwrap() = true;
        self.gate.1.notify_all();
    }

    fn wait_for_gate(&self) {
        let mut open = self.gate.0.lock().unwrap();
        while !*open {
            open = self.gate.1.wait(open).unwrap();
        }
    }
}

impl FolderFs for FaultFs {
    fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if self.fault() == Fault::DenyWrite {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        OsFs.write_new(path, bytes)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        match self.fault() {
            Fault::ErrorAfterRename => {
                OsFs.rename(from, to)?;
                Err(io::Error::other("injected error after rename"))
            }
            Fault::ErrorInsteadOfRename => Err(io::Error::other("injected rename failure")),
            Fault::Hold => {
                self.wait_for_gate();
                OsFs.rename(from, to)
            }
            _ => OsFs.rename(from, to),
        }
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        OsFs.remove_file(path)?;
        if self.fault() == Fault::ErrorAfterRemove {
            return Err(io::Error::other("injected error after remove"));
        }
        Ok(())
    }
}

struct Studio {
    state: Arc<StudioState>,
    folder: DurableFolder,
}

async fn studio(data_dir: &Path, root: &Path, fs: Arc<FaultFs>) -> Studio {
    let options = StudioOptions::ephemeral(data_dir);
    let state = host::build_state(&options, 0).await.expect("state builds");
    let folder = state
        .saves
        .open_folder_with_fs(root, fs)
        .expect("folder opens");
    // As `--folder` at start-up: unsaved work stored from this folder is resumed, else imported.
    let adapter: Arc<dyn FolderAdapter> = Arc::new(folder.clone());
    let resumed = state
        .workspace
        .manager()
        .resume_folder(adapter.clone())
        .await;
    if resumed.expect("folder resumes").is_none() {
        state
            .workspace
            .manager()
            .open_folder(adapter, ImportGuard::default())
            .await
            .expect("folder links");
    }
    Studio { state, folder }
}

fn folder_with_index(source: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("index.html"), source).unwrap();
    root
}

impl Studio {
    async fn edit(&self, source: &str) {
        self.state
            .workspace
            .manager()
            .write_file("index.html", source, WriteOptions::default())
            .await
            .expect("edit applies");
    }

    async fn save_all(&self) -> Value {
        let context = ToolCallContext::new(ToolCallSource::Local, ToolCallMode::Direct);
        let request = json!({"method": "tools/call", "params": {"name": "workspace.saveAll", "arguments": {}}});
        let result = self
            .state
            .registry
            .call_tool_value(&request, ToolCallOptions::default().with_context(context))
            .await;
        serde_json::to_value(result).unwrap()
    }

    async fn dirty(&self) -> Vec<String> {
        self.state
            .workspace
            .manager()
            .snapshot()
            .await
            .dirty_paths()
    }

    async fn record_state(&self, source: &str) -> Option<OperationState> {
        let key = self.folder.write_key_for("index.html", source.as_bytes());
        let record = self.state.saves.store().get(&key).await.unwrap();
        record.map(|record| record.state)
    }
}

fn assert_saved(result: &Value) {
    assert!(
        result.get("isError").is_none(),
        "unexpected error: {result}"
    );
    assert_eq!(
        result["structuredContent"]["savedPaths"],
        json!(["index.html"]),
        "{result}"
    );
}

#[tokio::test]
async fn a_normal_save_writes_the_file_and_records_it_completed() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let studio = studio(data.path(), root.path(), FaultFs::new()).await;
    studio.edit("<p>new</p>").await;

    assert_saved(&studio.save_all().await);

    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>new</p>"
    );
    assert!(studio.dirty().await.is_empty());
    assert_eq!(
        studio.record_state("<p>new</p>").await,
        Some(OperationState::Completed)
    );
    assert!(data.path().join(DURABLE_OPERATIONS_DB_FILE).is_file());
    assert_eq!(studio.state.saves.storage_mode(), "sqlite");
}

#[tokio::test]
async fn an_ambiguous_write_is_side_effect_unknown_and_keeps_the_file_dirty() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio.edit("<p>new</p>").await;
    fs.set(Fault::ErrorAfterRename);

    let result = studio.save_all().await;

    let error = error_of(&result);
    assert_eq!(error["code"], "WORKSPACE_SIDE_EFFECT_UNKNOWN", "{result}");
    assert_eq!(error["retryable"], json!(false));
    assert_eq!(error["details"]["operation"], "write");
    assert_eq!(error["details"]["path"], "index.html");
    assert!(
        error["details"]["reason"]
            .as_str()
            .unwrap()
            .contains("injected error after rename")
    );
    assert_eq!(studio.dirty().await, vec!["index.html".to_owned()]);
    assert_eq!(
        studio.record_state("<p>new</p>").await,
        Some(OperationState::Unknown)
    );
}

#[tokio::test]
async fn a_retry_after_the_bytes_landed_recovers_the_record_and_cleans_the_file() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio.edit("<p>new</p>").await;
    fs.set(Fault::ErrorAfterRename);
    error_of(&studio.save_all().await);
    // Any write now would fail: success must come from reading the file back, not rewriting.
    fs.set(Fault::ErrorInsteadOfRename);

    assert_saved(&studio.save_all().await);

    assert!(studio.dirty().await.is_empty());
    let key = studio.folder.write_key_for("index.html", b"<p>new</p>");
    let record = studio.state.saves.store().get(&key).await.unwrap().unwrap();
    assert_eq!(record.state, OperationState::Completed);
    assert!(record.reconciled_by.is_some(), "resolved by reconciliation");
}

#[tokio::test]
async fn a_retry_when_the_folder_differs_stays_unknown() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio.edit("<p>new</p>").await;
    fs.set(Fault::ErrorInsteadOfRename);
    error_of(&studio.save_all().await);
    fs.set(Fault::None);

    let result = studio.save_all().await;

    assert_eq!(error_of(&result)["code"], "WORKSPACE_SIDE_EFFECT_UNKNOWN");
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>old</p>"
    );
    assert_eq!(studio.dirty().await, vec!["index.html".to_owned()]);
    assert_eq!(
        studio.record_state("<p>new</p>").await,
        Some(OperationState::Unknown)
    );
}

#[tokio::test]
async fn a_confirmed_refusal_keeps_its_code_and_a_later_save_writes() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio.edit("<p>new</p>").await;
    fs.set(Fault::DenyWrite);

    let result = studio.save_all().await;
    assert_eq!(
        error_of(&result)["code"],
        "WORKSPACE_FOLDER_PERMISSION_DENIED",
        "{result}"
    );
    assert_eq!(
        studio.record_state("<p>new</p>").await,
        Some(OperationState::Failed)
    );
    fs.set(Fault::None);

    assert_saved(&studio.save_all().await);
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>new</p>"
    );
}

#[tokio::test]
async fn saving_the_same_bytes_again_after_an_overwrite_writes_them_again() {
    let (data, root) = (tempfile::tempdir().unwrap(), folder_with_index("<p>a</p>"));
    let studio = studio(data.path(), root.path(), FaultFs::new()).await;
    studio.edit("<p>b</p>").await;
    assert_saved(&studio.save_all().await);
    studio.edit("<p>c</p>").await;
    assert_saved(&studio.save_all().await);
    // Back to b: its completed record is stale because the file now holds c.
    studio.edit("<p>b</p>").await;

    assert_saved(&studio.save_all().await);

    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>b</p>"
    );
    let digest = content_digest(b"<p>b</p>");
    let next = write_key(studio.folder.scope(), "index.html", &digest, 1);
    let record = studio.state.saves.store().get(&next).await.unwrap();
    assert_eq!(record.map(|r| r.state), Some(OperationState::Completed));
}

#[tokio::test]
async fn a_reload_reconciles_an_unresolved_write_and_the_next_save_writes() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio.edit("<p>new</p>").await;
    fs.set(Fault::ErrorInsteadOfRename);
    error_of(&studio.save_all().await);
    fs.set(Fault::None);
    // The edit is still dirty, so only an explicit discard may reload over it.
    let guard = ImportGuard::default().discarding(true);
    let reloaded = studio.state.workspace.manager().reload_folder(guard).await;
    assert!(reloaded.is_ok(), "{reloaded:?}");
    assert!(
        studio.dirty().await.is_empty(),
        "the reload took the disk state"
    );
    studio.edit("<p>new</p>").await;

    assert_saved(&studio.save_all().await);

    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>new</p>"
    );
    assert_eq!(
        studio.record_state("<p>new</p>").await,
        Some(OperationState::Failed)
    );
}

#[tokio::test]
async fn a_restart_on_the_same_data_dir_sees_the_same_records() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let first = studio(data.path(), root.path(), fs.clone()).await;
    first.edit("<p>new</p>").await;
    assert_saved(&first.save_all().await);
    first.edit("<p>newer</p>").await;
    fs.set(Fault::ErrorInsteadOfRename);
    error_of(&first.save_all().await);
    first.state.registry.shutdown();
    drop(first);
    fs.set(Fault::None);

    let second = studio(data.path(), root.path(), fs.clone()).await;

    assert_eq!(
        second.record_state("<p>new</p>").await,
        Some(OperationState::Completed)
    );
    assert_eq!(
        second.record_state("<p>newer</p>").await,
        Some(OperationState::Unknown)
    );
    // The restart kept the unsaved edit (still dirty) and read the disk, which reconciles the
    // unresolved write on the next save.
    assert_eq!(second.dirty().await, ["index.html"]);
    second.edit("<p>newer</p>").await;
    assert!(second.save_all().await.get("isError").is_none());
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>newer</p>"
    );
}

#[tokio::test]
async fn an_ambiguous_deletion_is_unknown_then_reconciled_when_the_file_is_gone() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    fs::write(root.path().join("extra.txt"), "extra").unwrap();
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    studio
        .state
        .workspace
        .manager()
        .delete_file("extra.txt", None)
        .await
        .expect("delete applies");
    fs.set(Fault::ErrorAfterRemove);

    let result = studio.save_all().await;
    let error = error_of(&result);
    assert_eq!(error["code"], "WORKSPACE_SIDE_EFFECT_UNKNOWN", "{result}");
    assert_eq!(error["details"]["operation"], "delete");
    assert_eq!(error["details"]["path"], "extra.txt");

    let result = studio.save_all().await;
    assert!(
        result.get("isError").is_none(),
        "unexpected error: {result}"
    );
    assert_eq!(
        result["structuredContent"]["deletedPaths"],
        json!(["extra.txt"])
    );
    assert!(!root.path().join("extra.txt").exists());
}

#[tokio::test]
async fn a_completed_record_replays_without_rewriting_when_the_file_holds_the_bytes() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    let file = live_code_editor::WorkspaceFile::text("index.html", "<p>new</p>");
    studio.folder.write_file(&file).await.expect("first write");
    // Any write would now fail, so success proves the repeat replayed instead of rewriting.
    fs.set(Fault::ErrorInsteadOfRename);

    studio.folder.write_file(&file).await.expect("replayed");

    let key = studio.folder.write_key_for("index.html", b"<p>new</p>");
    let record = studio.state.saves.store().get(&key).await.unwrap().unwrap();
    assert_eq!(record.state, OperationState::Completed);
    assert!(
        record.reconciled_by.is_none(),
        "completed by the write itself"
    );
}

#[tokio::test]
async fn an_unusable_data_dir_keeps_save_records_in_memory() {
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let saves = DurableSaves::open(blocker.path()).await;
    assert_eq!(saves.storage_mode(), "memory");

    let root = folder_with_index("<p>old</p>");
    let folder = saves.open_folder(root.path()).unwrap();
    let file = live_code_editor::WorkspaceFile::text("index.html", "<p>new</p>");
    folder.write_file(&file).await.expect("write succeeds");
    let key = folder.write_key_for("index.html", b"<p>new</p>");
    let record = saves.store().get(&key).await.unwrap().unwrap();
    assert_eq!(record.state, OperationState::Completed);
}

#[test]
fn keys_name_the_destination_scope_path_and_content_digest() {
    let digest = content_digest(b"abc");
    assert_eq!(
        digest,
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        write_key("/srv/site", "css/app.css", &digest, 0),
        format!("workspace.saveAll:/srv/site:css/app.css:{digest}")
    );
    assert_eq!(
        write_key("/srv/site", "css/app.css", &digest, 2),
        format!("workspace.saveAll:/srv/site:css/app.css:{digest}#2")
    );
    assert_eq!(
        delete_key("/srv/site", "old.js", 0),
        "workspace.saveAll:/srv/site:old.js:delete"
    );
}

#[tokio::test]
async fn a_caller_that_gives_up_mid_write_still_leaves_a_settled_record() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let fs = FaultFs::new();
    let studio = studio(data.path(), root.path(), fs.clone()).await;
    let file = live_code_editor::WorkspaceFile::text("index.html", "<p>new</p>");
    fs.set(Fault::Hold);

    // The rename is held until the gate opens, so this caller always gives up first.
    let gave_up = tokio::time::timeout(Duration::from_millis(50), studio.folder.write_file(&file));
    assert!(gave_up.await.is_err(), "the held write cannot finish");
    fs.open_gate();

    let key = studio.folder.write_key_for("index.html", b"<p>new</p>");
    let mut state = None;
    for _ in 0..400 {
        state = studio
            .state
            .saves
            .store()
            .get(&key)
            .await
            .unwrap()
            .map(|r| r.state);
        if state == Some(OperationState::Completed) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(state, Some(OperationState::Completed));
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>new</p>"
    );
}

#[tokio::test]
async fn the_same_content_is_rewritten_at_most_max_save_generations_times() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let studio = studio(data.path(), root.path(), FaultFs::new()).await;
    let a = live_code_editor::WorkspaceFile::text("index.html", "<p>a</p>");
    let b = live_code_editor::WorkspaceFile::text("index.html", "<p>b</p>");
    // Each a-then-b round leaves a's completed record stale, so a's next save uses the next
    // generation; the last allowed generation still writes.
    for _ in 0..MAX_SAVE_GENERATIONS {
        studio
            .folder
            .write_file(&a)
            .await
            .expect("a within the bound");
        studio
            .folder
            .write_file(&b)
            .await
            .expect("b within the bound");
    }

    let over = studio.folder.write_file(&a).await.unwrap_err();

    assert_eq!(over.code.as_str(), "WORKSPACE_SIDE_EFFECT_UNKNOWN");
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>b</p>"
    );
}

/// A pid that ran on this machine and has exited.
fn exited_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

async fn claim_as(studio: &Studio, source: &str, owner_id: &str) {
    use tool_durable_operations::{ClaimRequest, ClaimStatus};
    let key = studio.folder.write_key_for("index.html", source.as_bytes());
    let fingerprint = content_digest(source.as_bytes());
    let claim = studio
        .state
        .saves
        .store()
        .claim(ClaimRequest {
            key: &key,
            fingerprint: &fingerprint,
            owner_id,
            lease: None,
        })
        .await
        .unwrap();
    assert_eq!(claim.status, ClaimStatus::Owner);
}

#[tokio::test]
async fn a_save_left_pending_by_a_killed_studio_does_not_block_the_next_save() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let studio = studio(data.path(), root.path(), FaultFs::new()).await;
    studio.edit("<p>new</p>").await;
    // The killed process claimed the write (a five-minute lease) and died before writing.
    claim_as(&studio, "<p>new</p>", &format!("studio:{}", exited_pid())).await;

    assert_saved(&studio.save_all().await);

    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>new</p>"
    );
    assert!(studio.dirty().await.is_empty());
}

#[tokio::test]
async fn a_save_pending_in_a_live_process_still_blocks_rather_than_writing_twice() {
    let (data, root) = (
        tempfile::tempdir().unwrap(),
        folder_with_index("<p>old</p>"),
    );
    let studio = studio(data.path(), root.path(), FaultFs::new()).await;
    // Another running process (the test runner that started this one) holds the write.
    let live_other = format!("studio:{}", std::os::unix::process::parent_id());
    claim_as(&studio, "<p>newer</p>", &live_other).await;
    studio.edit("<p>newer</p>").await;

    let error = error_of(&studio.save_all().await).clone();

    assert_eq!(error["code"], "WORKSPACE_SIDE_EFFECT_UNKNOWN", "{error}");
    assert_eq!(
        fs::read_to_string(root.path().join("index.html")).unwrap(),
        "<p>old</p>"
    );
    assert_eq!(studio.dirty().await, ["index.html"]);
}
