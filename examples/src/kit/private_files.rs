//! The data directory holds the workspace, save records, settings (maybe the API key) and the
//! launch token: it is created owner-only (0700) and each of its files is owner-only (0600)
//! from the moment it exists, never chmod-ed after its bytes landed.

use std::io::Write;
use std::path::Path;

/// Mode of the data directory when the studio creates it.
#[cfg(unix)]
const DIR_MODE: u32 = 0o700;
/// Mode of every file the studio keeps in it.
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) owner-only; an existing directory keeps its mode, since
/// it may be one the person chose for other things too.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)
}

/// Makes sure `path` exists owner-only before another library (SQLite) opens it: a missing
/// file is created empty with the private mode, an existing one is narrowed to it.
pub(crate) fn prepare_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options.open(path)?;
    restrict(path)
}

/// Replaces `path` with `bytes` atomically: a fresh temp file created owner-only, then renamed.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temp, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            let _ = std::fs::remove_file(&temp);
            Err(error)
        }
    }
}

#[cfg(unix)]
fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(FILE_MODE))
}

#[cfg(not(unix))]
fn restrict(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_data_dir_and_its_files_are_owner_only() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/data");
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let db = dir.join("x.sqlite");
        prepare_private_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        let token = dir.join("token");
        write_private(&token, b"secret").unwrap();
        assert_eq!(mode(&token), 0o600);
        assert_eq!(std::fs::read(&token).unwrap(), b"secret");
        write_private(&token, b"second").unwrap();
        assert_eq!(std::fs::read(&token).unwrap(), b"second");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            2,
            "no temp file left"
        );
    }

    #[test]
    fn an_existing_file_is_narrowed_and_keeps_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.sqlite");
        std::fs::write(&db, b"bytes").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        prepare_private_file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(std::fs::read(&db).unwrap(), b"bytes");
    }
}
