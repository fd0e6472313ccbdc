//! `studio tools`: explicit registry commands from a terminal or a script.
//!
//! `studio tools list` and `studio tools call NAME --args JSON` run one named tool through the
//! same registry and policy as every other caller, either headless against a workspace (its
//! data directory, optionally a linked folder) or against a running studio (its URL and
//! per-launch token). Approval-required tools prompt on the terminal when stdin is
//! interactive and are denied otherwise unless `--approve` is given for that call. There is no
//! command that runs arbitrary scripts.

mod approval;
mod backend;
mod output;
mod remote;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Map, Value};
use tool_protocol::{ToolCallError, ToolCallRequest};

pub use approval::{ApprovalMode, CliApproval};
pub use backend::{Backend, CLI_SESSION_ID};

use crate::host::DEFAULT_DATA_DIR;

/// Exit code of a successful command.
pub const EXIT_OK: u8 = 0;
/// Exit code of a tool error (its code is printed on stderr) or an unreachable target.
pub const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code of a usage error (clap's own parse errors use it too).
pub const EXIT_USAGE: u8 = 2;
/// Environment variable read when `--token` is not given.
pub const TOKEN_ENV: &str = "STUDIO_TOKEN";
/// Argument name `--expected-revision` is merged into.
const EXPECTED_REVISION_ARG: &str = "expectedRevision";

/// `studio tools ...`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ToolsAction,
}

/// The `studio tools` commands.
#[derive(Debug, Subcommand)]
pub enum ToolsAction {
    /// List the registry's tools: `name  [read-only|approval]  description`.
    List {
        /// Print the canonical tools/list result as JSON instead.
        #[arg(long)]
        json: bool,
        /// Where the registry lives.
        #[command(flatten)]
        target: Target,
    },
    /// Call one tool and print its structured result as JSON.
    Call(CallArgs),
}

/// `studio tools call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name, e.g. `workspace.readFile`.
    pub name: String,
    /// The tool's arguments as one JSON object.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The workspace revision the caller last read (merged as `expectedRevision`).
    #[arg(long)]
    pub expected_revision: Option<u64>,
    /// Approve this call if the policy asks (needed when stdin is not a terminal).
    #[arg(long)]
    pub approve: bool,
    /// Headless with `--folder`: save the workspace back to the folder after a successful mutation.
    #[arg(long, requires = "folder")]
    pub save: bool,
    /// Where the registry lives.
    #[command(flatten)]
    pub target: Target,
}

/// Where the registry lives: a headless workspace or a running studio.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// Headless: a folder to open (imported into the workspace, saved back with `--save`).
    #[arg(long, conflicts_with = "url")]
    pub folder: Option<PathBuf>,
    /// Headless: let `--folder` replace unsaved edits stored from another source (edits stored
    /// from the same folder are always kept).
    #[arg(long, requires = "folder")]
    pub discard_changes: bool,
    /// Directory of the workspace database and settings (with `--url`: where the running
    /// studio wrote its token file, read when no token is given).
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,
    /// A running studio, e.g. `http://127.0.0.1:4870`.
    #[arg(long)]
    pub url: Option<String>,
    /// The running studio's per-launch token (default: the `STUDIO_TOKEN` environment
    /// variable, then the token file in `--data-dir`).
    #[arg(long, requires = "url")]
    pub token: Option<String>,
}

/// Why a command did not succeed.
#[derive(Debug)]
pub enum CliError {
    /// Bad input from the command line (exit 2).
    Usage(String),
    /// The target could not be opened or reached (exit 1).
    Unavailable(String),
    /// The tool answered with an error (exit 1), with a hint printed after it.
    Tool(ToolCallError, Option<String>),
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Unavailable(_) | Self::Tool(..) => EXIT_TOOL_ERROR,
        }
    }

    /// The line printed on stderr: `CODE: message` for a tool error.
    pub fn line(&self) -> String {
        match self {
            Self::Usage(message) => format!("studio tools: {message}"),
            Self::Unavailable(message) => format!("studio tools: {message}"),
            Self::Tool(error, None) => format!("{}: {}", error.code, error.message),
            Self::Tool(error, Some(hint)) => {
                format!("{}: {}\nstudio tools: {hint}", error.code, error.message)
            }
        }
    }
}

/// Runs `studio tools ...` and returns the process exit code.
pub async fn run(args: ToolsArgs) -> ExitCode {
    let outcome = match args.action {
        ToolsAction::List { json, target } => list(&target, json).await,
        ToolsAction::Call(call_args) => call(&call_args).await,
    };
    match outcome {
        Ok(stdout) => {
            println!("{stdout}");
            ExitCode::from(EXIT_OK)
        }
        Err(error) => {
            eprintln!("{}", error.line());
            ExitCode::from(error.exit_code())
        }
    }
}

/// `studio tools list`: the text or JSON listing.
async fn list(target: &Target, json: bool) -> Result<String, CliError> {
    let backend = Backend::connect(target).await?;
    let tools = backend.list().await;
    backend.close();
    let tools = tools?;
    Ok(if json {
        output::list_json(tools)
    } else {
        output::list_lines(&tools)
    })
}

/// `studio tools call`: the pretty structured result.
async fn call(args: &CallArgs) -> Result<String, CliError> {
    let request = ToolCallRequest::new(
        args.name.clone(),
        call_arguments(&args.args, args.expected_revision)?,
    );
    let mode = ApprovalMode::for_call(args.approve);
    let backend = Backend::connect(&args.target).await?;
    let outcome = backend.call(request, mode, args.save).await;
    backend.close();
    let result = outcome?;
    match result.error {
        Some(error) => {
            let hint = needs_approve_hint(&error, mode, &args.name);
            Err(CliError::Tool(error, hint))
        }
        None => Ok(output::result_json(&result)),
    }
}

/// Explains a policy denial of a call nobody could be asked about.
fn needs_approve_hint(error: &ToolCallError, mode: ApprovalMode, name: &str) -> Option<String> {
    (mode == ApprovalMode::Refuse && error.code == tool_protocol::codes::TOOL_POLICY_DENIED).then(
        || {
            format!(
                "{name} needs approval and stdin is not a terminal: pass --approve to allow this call."
            )
        },
    )
}

/// Parses `--args` as a JSON object and merges `--expected-revision` into it.
pub fn call_arguments(
    raw: &str,
    expected_revision: Option<u64>,
) -> Result<Map<String, Value>, CliError> {
    let value: Value = serde_json::from_str(raw)
        .map_err(|error| CliError::Usage(format!("--args is not valid JSON: {error}")))?;
    let Value::Object(mut arguments) = value else {
        return Err(CliError::Usage("--args must be a JSON object.".to_owned()));
    };
    if let Some(revision) = expected_revision {
        let merged = Value::from(revision);
        match arguments.get(EXPECTED_REVISION_ARG) {
            Some(existing) if *existing != merged => {
                return Err(CliError::Usage(format!(
                    "--expected-revision {revision} disagrees with {EXPECTED_REVISION_ARG} in --args."
                )));
            }
            _ => {
                arguments.insert(EXPECTED_REVISION_ARG.to_owned(), merged);
            }
        }
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expected_revision_is_merged_and_conflicts_are_usage_errors() {
        let merged = call_arguments(r#"{"path":"a.css"}"#, Some(7)).unwrap();
        assert_eq!(
            Value::Object(merged),
            json!({"path": "a.css", "expectedRevision": 7})
        );
        let same = call_arguments(r#"{"expectedRevision":7}"#, Some(7)).unwrap();
        assert_eq!(same["expectedRevision"], 7);
        let clash = call_arguments(r#"{"expectedRevision":6}"#, Some(7)).unwrap_err();
        assert_eq!(clash.exit_code(), EXIT_USAGE);
    }

    #[test]
    fn args_must_be_a_json_object() {
        for raw in ["[1]", "\"x\"", "{nope", ""] {
            let error = call_arguments(raw, None).unwrap_err();
            assert_eq!(error.exit_code(), EXIT_USAGE, "{raw}");
        }
        assert!(call_arguments("{}", None).unwrap().is_empty());
    }
}
