//! The key that seals the `requestState` of MCP approvals asked with `input_required`
//! (protocol 2026-07-28): kept owner-only in the data directory, so an approval asked before a
//! restart can still be answered after it, and studios sharing the directory share the key.

use std::path::Path;

use tool_context_mcp::RequestStateKey;

use super::private_files;

/// File of the key (hex) inside the data directory.
pub const MCP_STATE_KEY_FILE: &str = "mcp-request-state.key";

/// The stored key, or a new one written owner-only. When the directory cannot hold it the key
/// lives for this process only (logged): approvals then do not survive a restart.
pub fn load_or_create(data_dir: &Path) -> RequestStateKey {
    let path = data_dir.join(MCP_STATE_KEY_FILE);
    if let Some(key) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| hex::decode(text.trim()).ok())
        .and_then(|bytes| RequestStateKey::from_bytes(&bytes).ok())
    {
        return key;
    }
    let key = RequestStateKey::generate();
    let written = private_files::create_private_dir(data_dir)
        .and_then(|()| private_files::write_private(&path, hex::encode(key.as_bytes()).as_bytes()));
    if let Err(error) = written {
        tracing::warn!(%error, "MCP requestState key not stored; approvals asked now do not survive a restart");
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_created_once_owner_only_and_reloaded() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path());
        let again = load_or_create(dir.path());
        assert_eq!(first.as_bytes(), again.as_bytes());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(MCP_STATE_KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_damaged_key_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MCP_STATE_KEY_FILE), "not hex").unwrap();
        let key = load_or_create(dir.path());
        assert_eq!(load_or_create(dir.path()).as_bytes(), key.as_bytes());
    }
}
