//! Which parts of a prompt the local agent understood.
//!
//! Two rules keep a deterministic planner from acting on words it only half read:
//!
//! - A destructive or history tool (reset, undo, save, delete…) is planned only when the prompt
//!   *is* that command (`CommandForm::matches`): "reset the document" resets, "add a reset
//!   button" does not.
//! - Any other plan acts only if every clause of the prompt is made of words its intent knows
//!   (`unclear_parts`); otherwise the run ends `not-understood` naming the clauses it could
//!   not read, never a partial plan reported as done.

use super::plan::{Action, Intent, Stop};
use super::prompt::{looks_like_path, split_quotes};
use crate::preview_edits::Theme;

/// How to get a model for what the local agent does not understand (same on every surface).
pub(crate) const CONNECT_MODEL: &str = "To let a model handle any request, open Settings on the studio page, connect a model provider (OpenRouter, or an OpenAI-compatible endpoint such as llama-server), and choose it as the agent.";

/// The reply to `prompt` when a surface's local agent understands none of it: that it did
/// nothing, which part it could not read, what it understands (`help`), and how to connect a
/// model.
pub(crate) fn not_understood(prompt: &str, help: &str) -> Stop {
    unclear_stop(&not_understood_parts(prompt), help)
}

fn unclear_stop(parts: &[String], help: &str) -> Stop {
    Stop::NotUnderstood(format!(
        "The local agent did not understand {}, so it changed nothing (it acts only on a request it understands in full). {help} {CONNECT_MODEL}",
        quoted_list(parts)
    ))
}

/// [`understood`] with the words of the recognised intent.
pub(crate) fn understood_by_intent(
    recognised: (Intent, Action),
    prompt: &str,
    help: &str,
) -> (Intent, Action) {
    let intent = recognised.0;
    understood(recognised, prompt, |word| intent_knows(intent, word), help)
}

/// `recognised` if every clause of `prompt` is made of words `known` accepts; otherwise a stop
/// naming the clauses it could not read, so a half-understood prompt never acts on the half it
/// read. Commands were matched whole already, and stops stay as they are.
pub(crate) fn understood(
    recognised: (Intent, Action),
    prompt: &str,
    known: impl Fn(&str) -> bool,
    help: &str,
) -> (Intent, Action) {
    let (intent, action) = recognised;
    if action.is_err() || intent.is_command() {
        return (intent, action);
    }
    match unclear_parts(prompt, known).as_slice() {
        [] => (intent, action),
        parts => (Intent::Help, Err(unclear_stop(parts, help))),
    }
}

/// A command form `verbs` + `objects` without a file.
pub(crate) const fn command(
    verbs: &'static [&'static str],
    objects: &'static [&'static str],
) -> CommandForm {
    CommandForm {
        verbs,
        objects,
        requires: &[],
        path: PathRule::Forbidden,
    }
}

/// Words that carry no request of their own (articles, pronouns, politeness, question words).
const FILLERS: &[&str] = &[
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "from", "with", "into", "as", "by",
    "and", "or", "please", "pls", "now", "me", "my", "our", "your", "us", "it", "its", "this",
    "that", "these", "those", "is", "are", "be", "was", "can", "could", "would", "will", "you",
    "i", "we", "let", "lets", "s", "so", "just", "bit", "little", "ok", "okay", "hey", "hi",
    "thanks", "thank", "kindly", "do", "again", "there", "here", "what", "whats", "how", "which",
];

/// Words that join two requests: a prompt is read clause by clause between them.
const CONJUNCTIONS: &[&str] = &["and", "then", "but", "also", "plus", "&"];

/// Words a command may carry besides its verb and objects ("undo that", "please save now").
const COMMAND_FILLERS: &[&str] = &[
    "the", "this", "that", "it", "my", "our", "please", "pls", "now", "again", "just", "ok",
    "okay", "for", "me", "last", "latest", "previous", "recent",
];

/// Whether a command names a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathRule {
    /// The command takes no file ("reset").
    Forbidden,
    /// The command may name a file ("save" or "save styles.css").
    Optional,
    /// The command must name a file ("delete app.js").
    Required,
}

/// A command a prompt can *be*: a verb, then only its objects and courtesy words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandForm {
    /// The first word.
    pub verbs: &'static [&'static str],
    /// Words that may follow the verb.
    pub objects: &'static [&'static str],
    /// At least one of these must follow the verb (empty: none needed).
    pub requires: &'static [&'static str],
    /// Whether a file path may or must appear.
    pub path: PathRule,
}

impl CommandForm {
    /// Whether `prompt` is this command and nothing else: no quoted text, the verb first (after
    /// a courtesy word), then only objects and courtesy words, and a file path as the form asks.
    pub(crate) fn matches(&self, prompt: &str) -> bool {
        let (quotes, unquoted) = split_quotes(prompt);
        if !quotes.is_empty() {
            return false;
        }
        let (words, paths) = words_and_paths(&unquoted);
        let path_ok = match self.path {
            PathRule::Forbidden => paths == 0,
            PathRule::Optional => paths <= 1,
            PathRule::Required => paths == 1,
        };
        let mut rest = words
            .iter()
            .map(String::as_str)
            .skip_while(|word| matches!(*word, "please" | "pls" | "ok" | "okay" | "now" | "just"));
        let Some(verb) = rest.next() else {
            return false;
        };
        let rest: Vec<&str> = rest.collect();
        path_ok
            && self.verbs.contains(&verb)
            && rest.iter().all(|word| self.knows(word))
            && (self.requires.is_empty() || rest.iter().any(|word| self.requires.contains(word)))
    }

    /// Every word the command knows (its verbs and objects), for the clause check.
    pub(crate) fn knows(&self, word: &str) -> bool {
        self.verbs.contains(&word)
            || self.objects.contains(&word)
            || self.requires.contains(&word)
            || COMMAND_FILLERS.contains(&word)
    }
}

/// The clauses of `prompt` holding a word that neither `known` nor the filler list accepts, as
/// written (trimmed, long ones cut). Quoted text is data and never unclear; so are file paths.
pub(crate) fn unclear_parts(prompt: &str, known: impl Fn(&str) -> bool) -> Vec<String> {
    clauses(prompt)
        .into_iter()
        .filter(|clause| {
            let (_, unquoted) = split_quotes(clause);
            words_and_paths(&unquoted)
                .0
                .iter()
                .any(|word| !is_known(word, &known))
        })
        .map(|clause| shortened(clause.trim()))
        .collect()
}

/// The parts of a prompt nothing understood: its unclear clauses, else the whole prompt.
pub(crate) fn not_understood_parts(prompt: &str) -> Vec<String> {
    let parts = unclear_parts(prompt, |_| false);
    if parts.is_empty() {
        vec![shortened(prompt.trim())]
    } else {
        parts
    }
}

/// `"a"`, `"a" and "b"`, `"a", "b" and "c"`.
pub(crate) fn quoted_list(parts: &[String]) -> String {
    let quoted: Vec<String> = parts.iter().map(|part| format!("\"{part}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Whether `word` belongs to what `intent` reads (shared by the three surfaces' planners).
pub(crate) fn intent_knows(intent: Intent, word: &str) -> bool {
    let words: &[&str] = match intent {
        Intent::Status => &[
            "status",
            "state",
            "dirty",
            "changed",
            "changes",
            "unsaved",
            "revision",
            "workspace",
            "preview",
            "page",
            "files",
            "file",
            "current",
            "check",
            "tell",
            "show",
            "get",
            "saved",
            "any",
            "summary",
            "info",
            "doing",
            "going",
            "look",
            "looks",
            "site",
            "editor",
            "document",
        ],
        Intent::RefreshPreview => &[
            "refresh",
            "reload",
            "remount",
            "rerun",
            "rerender",
            "re-render",
            "restart",
            "preview",
            "page",
            "frame",
        ],
        Intent::SetTheme => {
            return Theme::ALL.iter().any(|theme| theme.name() == word)
                || [
                    "make", "set", "change", "switch", "use", "turn", "apply", "theme", "color",
                    "colour", "accent", "palette", "scheme", "page", "site",
                ]
                .contains(&word);
        }
        Intent::UpdateHero => &[
            "set", "change", "update", "make", "rename", "replace", "write", "put", "hero",
            "headline", "heading", "title", "subtitle", "tagline", "text", "copy", "say", "says",
            "read", "reads", "called", "named", "main",
        ],
        Intent::AddFeature => &[
            "add",
            "create",
            "insert",
            "put",
            "new",
            "another",
            "feature",
            "features",
            "card",
            "cards",
            "called",
            "named",
            "titled",
            "description",
            "described",
            "describing",
            "saying",
            "says",
            "section",
        ],
        Intent::CreateFile => &[
            "create",
            "new",
            "add",
            "make",
            "write",
            "file",
            "called",
            "named",
            "containing",
            "contains",
            "content",
            "contents",
            "text",
            "source",
        ],
        Intent::ReplaceText => &[
            "replace",
            "change",
            "swap",
            "rename",
            "rewrite",
            "patch",
            "write",
            "overwrite",
            "with",
            "by",
            "all",
            "every",
            "everywhere",
            "occurrence",
            "occurrences",
            "first",
            "text",
            "word",
            "words",
            "file",
            "instead",
            "string",
            "source",
            "contents",
        ],
        Intent::Download => &["download", "file", "get", "copy"],
        Intent::OpenFile => &["open", "switch", "edit", "file", "editor", "show", "go"],
        Intent::ReadFile => &[
            "read", "show", "print", "view", "cat", "display", "open", "file", "contents",
            "content", "source", "code", "look",
        ],
        Intent::SetScenario => &[
            "use",
            "switch",
            "set",
            "change",
            "load",
            "pick",
            "select",
            "run",
            "scenario",
            "scenarios",
            "example",
            "demo",
        ],
        Intent::DesignEdit => return super::design::knows_word(word),
        _ => &[],
    };
    words.contains(&word)
}

fn is_known(word: &str, known: &impl Fn(&str) -> bool) -> bool {
    let whole = |word: &str| {
        FILLERS.contains(&word) || word.chars().all(|c| c.is_ascii_digit()) || known(word)
    };
    // "todo-list" is known as a whole or when each part is.
    whole(word) || (word.contains('-') && word.split('-').filter(|p| !p.is_empty()).all(whole))
}

/// The lowercase words of unquoted `text` (file paths left out) and how many paths it names.
fn words_and_paths(text: &str) -> (Vec<String>, usize) {
    let mut words = Vec::new();
    let mut paths = 0;
    for token in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
    {
        let token = token.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?' | '\'' | '’'));
        if token.is_empty() {
            continue;
        }
        if looks_like_path(token) {
            paths += 1;
            continue;
        }
        words.extend(
            token
                .to_lowercase()
                .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '&'))
                .filter(|word| !word.is_empty())
                .map(str::to_owned),
        );
    }
    (words, paths)
}

/// Splits `prompt` at `,`, `;`, a sentence end and the conjunctions, never inside quotes.
fn clauses(prompt: &str) -> Vec<String> {
    let mut clauses = Vec::new();
    let mut current = String::new();
    let mut word_start: Option<usize> = None;
    let mut quoted = false;
    let mut chars = prompt.chars().peekable();
    let end_clause = |current: &mut String, clauses: &mut Vec<String>| {
        if !current.trim().is_empty() {
            clauses.push(std::mem::take(current));
        }
        current.clear();
    };
    // A finished word that is a conjunction ends the clause before it.
    let end_word = |current: &mut String, start: Option<usize>, clauses: &mut Vec<String>| {
        if let Some(start) = start
            && CONJUNCTIONS.contains(&current[start..].to_lowercase().as_str())
        {
            current.truncate(start);
            end_clause(current, clauses);
        }
    };
    while let Some(ch) = chars.next() {
        if quoted {
            current.push(ch);
            quoted = !matches!(ch, '"' | '”');
            continue;
        }
        match ch {
            '"' | '“' => {
                end_word(&mut current, word_start.take(), &mut clauses);
                quoted = true;
                current.push(ch);
            }
            ',' | ';' => {
                end_word(&mut current, word_start.take(), &mut clauses);
                end_clause(&mut current, &mut clauses);
            }
            '.' | '!' | '?' if chars.peek().is_none_or(|next| next.is_whitespace()) => {
                end_word(&mut current, word_start.take(), &mut clauses);
                end_clause(&mut current, &mut clauses);
            }
            c if c.is_whitespace() => {
                end_word(&mut current, word_start.take(), &mut clauses);
                current.push(c);
            }
            c => {
                word_start.get_or_insert(current.len());
                current.push(c);
            }
        }
    }
    end_word(&mut current, word_start.take(), &mut clauses);
    end_clause(&mut current, &mut clauses);
    clauses
}

/// At most 80 characters of `text`, cut with an ellipsis.
fn shortened(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESET: CommandForm = CommandForm {
        verbs: &["reset"],
        objects: &["workspace", "document"],
        requires: &[],
        path: PathRule::Forbidden,
    };

    #[test]
    fn a_command_is_the_whole_prompt() {
        for prompt in [
            "reset",
            "Reset.",
            "please reset the workspace",
            "reset it now",
        ] {
            assert!(RESET.matches(prompt), "{prompt}");
        }
        for prompt in [
            "add a reset button",
            "reset the colour",
            "reset \"x\"",
            "reset index.html",
            "please",
            "",
        ] {
            assert!(!RESET.matches(prompt), "{prompt}");
        }
    }

    #[test]
    fn commands_check_their_paths_and_required_words() {
        let delete = CommandForm {
            verbs: &["delete"],
            objects: &["file"],
            requires: &[],
            path: PathRule::Required,
        };
        assert!(delete.matches("delete the file app.js"));
        assert!(!delete.matches("delete"));
        assert!(!delete.matches("delete app.js and styles.css"));
        let reload = CommandForm {
            verbs: &["reload"],
            objects: &["from"],
            requires: &["folder", "disk"],
            path: PathRule::Forbidden,
        };
        assert!(reload.matches("reload from disk"));
        assert!(!reload.matches("reload"));
    }

    #[test]
    fn clauses_split_at_conjunctions_and_punctuation_outside_quotes() {
        assert_eq!(
            clauses(r#"make it red and add "salt and pepper", then save. ok"#),
            ["make it red ", r#" add "salt and pepper""#, " save", " ok"]
        );
        assert_eq!(clauses("open app.js"), ["open app.js"]);
        assert_eq!(clauses("  "), Vec::<String>::new());
    }

    #[test]
    fn unclear_parts_name_the_clauses_with_unknown_words() {
        let theme = |word: &str| intent_knows(Intent::SetTheme, word);
        assert!(unclear_parts("Make the page rose please", theme).is_empty());
        assert_eq!(
            unclear_parts("make it violet and delete app.js", theme),
            ["delete app.js"]
        );
        assert!(
            unclear_parts(r#"set the theme "anything at all""#, theme).is_empty(),
            "quoted text is data"
        );
        assert_eq!(not_understood_parts("sing me a song"), ["sing me a song"]);
        assert_eq!(not_understood_parts("please"), ["please"]);
        assert_eq!(
            quoted_list(&["a".into(), "b".into(), "c".into()]),
            r#""a", "b" and "c""#
        );
        let long = "word ".repeat(40);
        assert!(not_understood_parts(&long)[0].ends_with('…'));
    }
}
