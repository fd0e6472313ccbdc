//! The environment a stdio server starts with: a few variables a program needs to run, plus
//! exactly what its configuration names.
//!
//! Why not the host's whole environment: a host's shell commonly holds API keys and tokens
//! (`OPENROUTER_API_KEY`, cloud credentials). Inherited, every key reaches every server the host
//! starts, including ones it does not trust. The list follows the MCP TypeScript SDK's default
//! (`getDefaultEnvironment`), plus locale, time zone and temp directory, which programs need to
//! format text and write scratch files, and the trusted-certificate locations. Proxy variables are
//! not inherited (a proxy URL may carry credentials): name them in the server's `env`.

use std::collections::BTreeMap;

use tokio::process::Command;

/// Variables a stdio server inherits from the host when they are set; every other variable is
/// withheld unless the server's `env` names it.
#[cfg(not(windows))]
pub const INHERITED_ENV_VARS: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    // Where the machine's trusted certificates are (paths, never secrets): without them a
    // server behind a TLS-inspecting proxy cannot reach anything over HTTPS.
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
];

/// Variables a stdio server inherits from the host when they are set; every other variable is
/// withheld unless the server's `env` names it.
#[cfg(windows)]
pub const INHERITED_ENV_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// Gives `process` the minimal inherited environment plus `configured` (which wins).
pub(super) fn apply(process: &mut Command, configured: &BTreeMap<String, String>) {
    process.env_clear();
    for name in INHERITED_ENV_VARS {
        if let Some(value) = std::env::var_os(name) {
            process.env(name, value);
        }
    }
    process.envs(configured);
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The variables a real child process sees.
    async fn child_environment(configured: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut process = Command::new("env");
        apply(&mut process, configured);
        let output = process.output().await.expect("env runs");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn a_server_sees_only_the_allowed_variables_and_its_own() {
        // Cargo sets this for every test process: a variable of the host's the server must not see.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let configured = BTreeMap::from([("SERVER_TOKEN".to_owned(), "s3cr3t".to_owned())]);
        let seen = child_environment(&configured).await;
        let unexpected: Vec<&String> = seen
            .keys()
            .filter(|name| !INHERITED_ENV_VARS.contains(&name.as_str()) && *name != "SERVER_TOKEN")
            .collect();
        assert!(
            unexpected.is_empty(),
            "withheld variables reached the server: {unexpected:?}"
        );
        assert_eq!(seen.get("SERVER_TOKEN").map(String::as_str), Some("s3cr3t"));
        assert_eq!(seen.get("PATH"), std::env::var("PATH").ok().as_ref());
    }

    #[tokio::test]
    async fn a_configured_variable_wins_over_an_inherited_one() {
        let configured = BTreeMap::from([("PATH".to_owned(), "/opt/only".to_owned())]);
        let mut process = Command::new("/usr/bin/env");
        apply(&mut process, &configured);
        let output = process.output().await.expect("env runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.lines().any(|line| line == "PATH=/opt/only"), "{text}");
    }
}
