//! Questions a mounted MCP server asks during a call (an elicitation, an `input_required`
//! round), shown to the person as a card beside the approvals and answered through
//! `POST /api/questions/{id}`. The page gets them in its approvals list, each marked
//! `"kind": "question"`, so every page renders both with one component.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_context::questions::{AnswerRefused, QuestionAnswer, QuestionSnapshot};
use tool_context::{ApprovalQueue, QuestionQueue};

use super::StudioState;
use crate::kit::error::StudioError;

/// The routes: `GET /api/questions` (pending, oldest first) and `POST /api/questions/{id}`.
pub(crate) fn routes() -> Router<Arc<StudioState>> {
    Router::new()
        .route("/api/questions", get(pending_questions))
        .route("/api/questions/{id}", post(answer_question))
}

/// What the page shows as cards: the pending approvals (newest first), then the questions.
pub(crate) fn pending_cards(approvals: &ApprovalQueue, questions: &QuestionQueue) -> Value {
    cards(&approvals.snapshot(), &questions.snapshot())
}

fn cards(approvals: &[tool_protocol::ToolApprovalSnapshot], questions: &QuestionSnapshot) -> Value {
    let mut cards = serde_json::to_value(approvals).unwrap_or_else(|_| json!([]));
    if let Value::Array(list) = &mut cards {
        list.extend(questions.iter().map(|question| {
            let mut card = serde_json::to_value(question).unwrap_or_default();
            card["kind"] = json!("question");
            card
        }));
    }
    cards
}

async fn pending_questions(State(state): State<Arc<StudioState>>) -> Json<QuestionSnapshot> {
    Json(state.questions.snapshot())
}

/// `{action: "accept", content: {...}}`, `{action: "decline"}` or `{action: "cancel"}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AnswerBody {
    action: String,
    #[serde(default)]
    content: Option<Map<String, Value>>,
}

async fn answer_question(
    State(state): State<Arc<StudioState>>,
    Path(id): Path<String>,
    Json(body): Json<AnswerBody>,
) -> Result<Json<Value>, StudioError> {
    let answer = match (body.action.as_str(), body.content) {
        ("accept", Some(values)) => QuestionAnswer::Accept(values),
        ("accept", None) => QuestionAnswer::Accept(Map::new()),
        ("decline", None) => QuestionAnswer::Decline,
        ("cancel", None) => QuestionAnswer::Cancel,
        _ => {
            return Err(StudioError::bad_request(
                "STUDIO_INVALID_ANSWER",
                "action must be \"accept\" (with content), \"decline\" or \"cancel\" (without).",
            ));
        }
    };
    match state.questions.answer(&id, answer) {
        Ok(()) => Ok(Json(json!({"id": id, "answered": body.action}))),
        Err(AnswerRefused::NotPending) => Err(StudioError::not_found(
            "STUDIO_QUESTION_NOT_FOUND",
            "No such question is waiting: it was answered already, or its call ended.",
        )),
        Err(AnswerRefused::Invalid(why)) => Err(StudioError::bad_request(
            "STUDIO_INVALID_ANSWER",
            format!("The answer does not fit the question: {why}. Nothing was sent."),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_follow_the_approvals_marked_as_questions() {
        let question = tool_context::questions::ToolQuestionSnapshot {
            id: "q-0".into(),
            tool_call_id: None,
            session_id: None,
            name: "py.ask".into(),
            asked_by: "MCP server \"py\"".into(),
            message: "Go on?".into(),
            requested_schema: json!({"type": "object"}),
            created_at: 1,
        };
        let shown = cards(&[], &Arc::new(vec![question]));
        assert_eq!(shown[0]["kind"], "question");
        assert_eq!(shown[0]["askedBy"], "MCP server \"py\"");
        assert_eq!(shown.as_array().unwrap().len(), 1);
    }
}
