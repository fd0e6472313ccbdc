//! OpenRouter agent runs: the bounded provider loop over the studio registry, with the same
//! policy, approvals and trace as local runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use live_code_editor::workspace::MAX_REPORTED_RUNTIME_ERRORS;
use live_code_editor::workspace::bridge::{PreviewAcks, PreviewStatus};
use openrouter_tool_loop::{
    ChatClient, ChatMessage, OpenRouterError, RegistryExecutor, RunEvent, RunOptions, RunRequest,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::StudioState;
use super::runs::{RunRetry, RunState, RunView, run_metadata};
use crate::agent::outcome::RunOutcome;
use crate::kit::error::StudioError;
use crate::kit::provider_codes::{for_provider, provider_error, provider_failure};
use crate::surfaces::Surface;

/// The registry as the loop's executor, narrowed to one surface's catalog plus the tools
/// mounted from MCP servers, read from the registry as each run starts (so a run sees the
/// servers mounted by then; a tool unmounted during a run fails its call with a coded error),
/// with the run's metadata in every call's context.
fn surface_executor(
    state: &StudioState,
    surface: Surface,
    metadata: serde_json::Map<String, Value>,
) -> RegistryExecutor {
    RegistryExecutor::new(state.registry.clone())
        .only(move |name| surface.offers_tool(name))
        .with_metadata(metadata)
}

/// Starts an OpenRouter run, or refuses with a coded error when no key or model is configured.
pub(crate) async fn start(
    state: Arc<StudioState>,
    surface: Surface,
    prompt: String,
    metadata: Option<Value>,
) -> Result<RunView, StudioError> {
    // Streamed: the run's view and the pages show the text and calls as they arrive.
    let Some(config) = state
        .settings
        .client_config()
        .map(|config| config.with_streaming(true))
    else {
        let message = if state.settings.public_view().model.is_empty() {
            "Model is not configured: pick one in Settings (Test connection lists them)."
        } else {
            "API key is not configured."
        };
        let refused = OpenRouterError::new(
            openrouter_tool_loop::codes::OPENROUTER_CONFIGURATION_ERROR,
            message,
        );
        return Err(provider_failure(&refused, state.settings.profile()));
    };
    let profile = config.provider;
    let client = ChatClient::new(config).map_err(|error| provider_failure(&error, profile))?;
    let (view, cancellation) = state.runs.begin("openrouter", &prompt);
    state.note_page_run(&view.run_id, surface);
    let executor = surface_executor(&state, surface, run_metadata(metadata.as_ref()));
    tokio::spawn(drive(
        state,
        client,
        view.clone(),
        cancellation,
        prompt,
        surface,
        executor,
    ));
    Ok(view)
}

async fn drive(
    state: Arc<StudioState>,
    client: ChatClient,
    view: RunView,
    cancellation: CancellationToken,
    prompt: String,
    surface: Surface,
    executor: RegistryExecutor,
) {
    let system_prompt = crate::agent::design::system_prompt_with_selection(
        surface.system_prompt(),
        executor.metadata(),
    );
    // Provider codes are shown under the provider kind this run talks to.
    let profile = client.config().provider;
    let runs = state.runs.clone();
    let run_id = view.run_id.clone();
    let listing_view = view.clone();
    // Turns of the earlier rounds (a fix turn continues the conversation in a new loop run,
    // whose turns start at 1 again): the page keys its bubbles by turn.
    let earlier_turns = Arc::new(AtomicU32::new(0));
    let turns_seen = Arc::clone(&earlier_turns);
    let options = RunOptions::with_cancel(cancellation).on_event(move |event| {
        if let RunEvent::RunCompleted { turns, .. } = event {
            turns_seen.fetch_add(*turns, Ordering::SeqCst);
        }
        let event = &event
            .clone()
            .with_turn_offset(turns_seen.load(Ordering::SeqCst));
        runs.stream(&run_id, event);
        match event {
            RunEvent::ToolsListed { count } => runs.record_listing(&listing_view, *count),
            RunEvent::RequestSent { turn, attempt } => {
                let detail = match attempt {
                    1 => format!("waiting for the provider (turn {turn})"),
                    _ => format!("waiting for the provider (turn {turn}, attempt {attempt})"),
                };
                runs.provider_wait(&run_id, detail, None);
            }
            RunEvent::RetryScheduled {
                attempt,
                max_attempts,
                delay_ms,
                code,
                ..
            } => {
                let retry = RunRetry {
                    attempt: *attempt,
                    max_attempts: *max_attempts,
                    delay_ms: *delay_ms,
                    code: for_provider(code, profile),
                };
                runs.provider_wait(&run_id, retry.describe(), Some(retry));
            }
            _ => runs.set_state(&run_id, RunState::Started),
        }
    });
    let acks = state.surface_preview_acks(surface);
    let started_at = acks.current().revision;
    let mut request = RunRequest::new(prompt)
        .with_system(system_prompt)
        .with_session_id(view.session_id.clone());
    let (mut texts, mut tool_names, mut fixes) = (Vec::new(), Vec::new(), 0);
    let outcome = loop {
        match client
            .run(&executor, request.clone(), options.clone())
            .await
        {
            Ok(completion) => {
                texts.push(completion.text);
                tool_names.extend(completion.trace.tool_names);
                // The run's change broke the preview: ask the model to fix it, a bounded
                // number of times; every fix is a mutation behind approval like the first.
                match preview_failure_prompt(&acks, started_at) {
                    Some(fix) if fixes < state.max_fix_turns => {
                        fixes += 1;
                        state
                            .runs
                            .fix_turn(&view.run_id, fix_notice(&acks, fixes, state.max_fix_turns));
                        // The conversation so far: earlier turns, the prompt, what this run added.
                        let asked = std::mem::replace(&mut request.prompt, fix);
                        request.history.push(ChatMessage::user(asked));
                        request.history.extend(completion.trace.messages);
                    }
                    _ => break RunOutcome::completed(texts.join("\n\n")),
                }
            }
            Err(failure) => {
                tool_names.extend(failure.trace.tool_names);
                break RunOutcome::from_error(
                    "openrouter",
                    &provider_error(&failure.error, profile),
                    true,
                );
            }
        }
    };
    let report = json!({"outcome": outcome, "toolNames": tool_names, "fixTurns": fixes});
    state.runs.finish(&view.run_id, &outcome, report);
}

/// What the person reads when a fix turn starts: what failed, and that the model is asked.
fn fix_notice(acks: &PreviewAcks, fix: u32, max: u32) -> String {
    let failure = match &acks.current().status {
        PreviewStatus::Error { message } => message.lines().next().unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    format!(
        "The preview failed after this change ({failure}): asking the model to fix it (fix {fix} of {max})."
    )
}

/// The message that asks the model to fix what broke, when the preview's current revision
/// (newer than `started_at`, so a change of this run) failed: the failure and its runtime
/// errors, each at its file position when known.
fn preview_failure_prompt(acks: &PreviewAcks, started_at: u64) -> Option<String> {
    let preview = acks.current();
    let PreviewStatus::Error { message } = &preview.status else {
        return None;
    };
    if preview.revision <= started_at {
        return None;
    }
    let reported: Vec<String> = acks
        .runtime_errors()
        .errors
        .iter()
        .take(MAX_REPORTED_RUNTIME_ERRORS)
        .map(|error| format!("- {}", error.describe()))
        .collect();
    let listed = if reported.is_empty() {
        format!("- {message}")
    } else {
        reported.join("\n")
    };
    Some(format!(
        "The preview of revision {} failed after your change:\n{listed}\nFix the code so the preview runs; read the files you change first.",
        preview.revision
    ))
}
