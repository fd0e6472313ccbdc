//! What a package file is and what it asks for, from one parse: ES module or CommonJS, its
//! literal `require` calls, the names it assigns on `exports` (what Node's CommonJS lexer
//! finds: `exports.x =`, `module.exports.x =`, `Object.defineProperty(exports, "x", …)`,
//! `module.exports = { x }`), whole-module re-exports (`module.exports = require("./x")`,
//! `__exportStar(require("./x"), exports)`), and each `process.env.NODE_ENV` to replace. A
//! `require` in a branch that `process.env.NODE_ENV` rules out (React's
//! `if (process.env.NODE_ENV === 'production')`) is not loaded, as a bundler's dead-code
//! elimination would drop it.

use std::collections::BTreeSet;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Argument, AssignmentExpression, BinaryExpression, CallExpression, ConditionalExpression,
    Expression, IfStatement, ObjectPropertyKind, StaticMemberExpression,
};
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::operator::BinaryOperator;

use super::NodeEnv;
use crate::preview::modules::{first_error, nesting_estimate};

/// How a package file is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `import`/`export` syntax, or `.mjs`.
    Module,
    /// Anything else: wrapped with `module`, `exports` and `require`.
    CommonJs,
    /// A `.json` file: its value is the module's `exports`.
    Json,
    /// A `.css` file: importing it adds it to the document.
    Stylesheet,
}

/// What one parse of a package file found.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub(crate) format: Option<Format>,
    /// `require("x")` with a literal: the specifier and where the call starts.
    pub(crate) requires: Vec<(String, usize)>,
    /// Where each `require(…)` without a literal starts.
    pub(crate) dynamic_requires: Vec<usize>,
    /// Names assigned on `exports`.
    pub(crate) exports: BTreeSet<String>,
    /// Specifiers whose exports this module re-exports whole.
    pub(crate) reexports: Vec<String>,
    /// Byte ranges of each `process.env.NODE_ENV`.
    pub(crate) node_env: Vec<(usize, usize)>,
    /// The first syntax error: message and byte offset.
    pub(crate) syntax_error: Option<(String, usize)>,
}

impl Facts {
    pub(crate) fn format(&self) -> Format {
        self.format.unwrap_or(Format::CommonJs)
    }
}

/// Parses the package file `path` and collects its [`Facts`] under `env`.
pub(crate) fn analyze(path: &str, source: &str, env: NodeEnv) -> Facts {
    for (extension, format) in [(".json", Format::Json), (".css", Format::Stylesheet)] {
        if path.ends_with(extension) {
            return Facts {
                format: Some(format),
                ..Facts::default()
            };
        }
    }
    let nesting = nesting_estimate(source);
    if nesting > crate::preview::MAX_MODULE_NESTING_DEPTH {
        return Facts {
            syntax_error: Some((
                format!("package module nests too deep (about {nesting} levels)"),
                0,
            )),
            ..Facts::default()
        };
    }
    stacker::grow(crate::preview::PARSER_STACK_BYTES, || {
        parse(path, source, env)
    })
}

fn parse(path: &str, source: &str, env: NodeEnv) -> Facts {
    let allocator = Allocator::default();
    let source_type = if path.ends_with(".mjs") {
        SourceType::mjs()
    } else if path.ends_with(".cjs") {
        SourceType::cjs()
    } else {
        SourceType::unambiguous()
    };
    let parsed = Parser::new(&allocator, source, source_type).parse();
    let mut scanner = Scanner {
        env: env.as_str(),
        ..Scanner::default()
    };
    scanner.visit_program(&parsed.program);
    let module = path.ends_with(".mjs") || parsed.module_record.has_module_syntax;
    Facts {
        format: Some(if module {
            Format::Module
        } else {
            Format::CommonJs
        }),
        requires: scanner.requires,
        dynamic_requires: scanner.dynamic_requires,
        exports: scanner.exports,
        reexports: scanner.reexports,
        node_env: scanner.node_env,
        syntax_error: first_error(&parsed.diagnostics),
    }
}

#[derive(Default)]
struct Scanner {
    env: &'static str,
    /// Inside a branch `process.env.NODE_ENV` rules out: its requires are not loaded.
    dead: bool,
    requires: Vec<(String, usize)>,
    dynamic_requires: Vec<usize>,
    exports: BTreeSet<String>,
    reexports: Vec<String>,
    node_env: Vec<(usize, usize)>,
}

impl<'a> Visit<'a> for Scanner {
    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        if call.callee.is_specific_id("require") && call.arguments.len() == 1 && !self.dead {
            match argument_text(&call.arguments[0]) {
                Some(specifier) => self.requires.push((specifier, call.span.start as usize)),
                None => self.dynamic_requires.push(call.span.start as usize),
            }
        }
        if call
            .callee
            .is_specific_member_access("Object", "defineProperty")
            && call.arguments.len() >= 2
            && call.arguments[0].as_expression().is_some_and(is_exports)
            && let Some(name) = argument_text(&call.arguments[1])
        {
            self.exports.insert(name);
        }
        if (call.callee.is_specific_id("__exportStar") || call.callee.is_specific_id("__export"))
            && !self.dead
            && let Some(specifier) = call.arguments.first().and_then(required_specifier)
        {
            self.reexports.push(specifier);
        }
        walk::walk_call_expression(self, call);
    }

    fn visit_assignment_expression(&mut self, assignment: &AssignmentExpression<'a>) {
        if let Some(member) = assignment.left.as_member_expression() {
            if is_exports(member.object())
                && let Some(name) = member.static_property_name()
            {
                self.exports.insert(name.to_string());
            }
            if member.object().is_specific_id("module")
                && member.static_property_name() == Some("exports")
            {
                self.note_module_exports(&assignment.right);
            }
        }
        walk::walk_assignment_expression(self, assignment);
    }

    fn visit_if_statement(&mut self, statement: &IfStatement<'a>) {
        let Some(taken) = self.node_env_test(&statement.test) else {
            return walk::walk_if_statement(self, statement);
        };
        self.visit_expression(&statement.test);
        self.in_branch(taken, |scanner| {
            scanner.visit_statement(&statement.consequent)
        });
        if let Some(alternate) = &statement.alternate {
            self.in_branch(!taken, |scanner| scanner.visit_statement(alternate));
        }
    }

    fn visit_conditional_expression(&mut self, conditional: &ConditionalExpression<'a>) {
        let Some(taken) = self.node_env_test(&conditional.test) else {
            return walk::walk_conditional_expression(self, conditional);
        };
        self.visit_expression(&conditional.test);
        self.in_branch(taken, |scanner| {
            scanner.visit_expression(&conditional.consequent)
        });
        self.in_branch(!taken, |scanner| {
            scanner.visit_expression(&conditional.alternate)
        });
    }

    fn visit_static_member_expression(&mut self, member: &StaticMemberExpression<'a>) {
        if member.property.name == "NODE_ENV"
            && member.object.is_specific_member_access("process", "env")
        {
            let span = member.span();
            self.node_env.push((span.start as usize, span.end as usize));
            return;
        }
        walk::walk_static_member_expression(self, member);
    }
}

impl Scanner {
    /// Visits a branch, dead unless `taken`.
    fn in_branch(&mut self, taken: bool, visit: impl FnOnce(&mut Self)) {
        let outer = self.dead;
        self.dead = outer || !taken;
        visit(self);
        self.dead = outer;
    }

    /// Whether a test comparing `process.env.NODE_ENV` with a string holds under the
    /// environment; `None` for any other test.
    fn node_env_test(&self, test: &Expression<'_>) -> Option<bool> {
        let Expression::BinaryExpression(binary) = test.get_inner_expression() else {
            return None;
        };
        let BinaryExpression {
            left,
            right,
            operator,
            ..
        } = binary.as_ref();
        let value = match (node_env_string(left), node_env_string(right)) {
            (Some(NodeEnvSide::Variable), Some(NodeEnvSide::Literal(value)))
            | (Some(NodeEnvSide::Literal(value)), Some(NodeEnvSide::Variable)) => value,
            _ => return None,
        };
        let equal = value == self.env;
        match operator {
            BinaryOperator::StrictEquality | BinaryOperator::Equality => Some(equal),
            BinaryOperator::StrictInequality | BinaryOperator::Inequality => Some(!equal),
            _ => None,
        }
    }

    /// `module.exports = …`: a whole-module re-export or an object literal's keys.
    fn note_module_exports(&mut self, value: &Expression<'_>) {
        match value.get_inner_expression() {
            Expression::CallExpression(call)
                if call.callee.is_specific_id("require") && !self.dead =>
            {
                if let Some(specifier) = call.arguments.first().and_then(argument_text) {
                    self.reexports.push(specifier);
                }
            }
            Expression::ObjectExpression(object) => {
                for property in &object.properties {
                    if let ObjectPropertyKind::ObjectProperty(property) = property
                        && let Some(name) = property.key.static_name()
                    {
                        self.exports.insert(name.into_owned());
                    }
                }
            }
            _ => {}
        }
    }
}

/// One side of a `NODE_ENV` comparison.
enum NodeEnvSide<'s> {
    Variable,
    Literal(&'s str),
}

fn node_env_string<'s>(expression: &'s Expression<'_>) -> Option<NodeEnvSide<'s>> {
    match expression.get_inner_expression() {
        Expression::StringLiteral(literal) => Some(NodeEnvSide::Literal(literal.value.as_str())),
        Expression::StaticMemberExpression(member)
            if member.property.name == "NODE_ENV"
                && member.object.is_specific_member_access("process", "env") =>
        {
            Some(NodeEnvSide::Variable)
        }
        _ => None,
    }
}

/// `exports` or `module.exports`.
fn is_exports(expression: &Expression<'_>) -> bool {
    expression.is_specific_id("exports")
        || expression.is_specific_member_access("module", "exports")
}

/// The specifier of `require("x")` passed as an argument.
fn required_specifier(argument: &Argument<'_>) -> Option<String> {
    match argument.as_expression()?.get_inner_expression() {
        Expression::CallExpression(call) if call.callee.is_specific_id("require") => {
            call.arguments.first().and_then(argument_text)
        }
        _ => None,
    }
}

/// A string literal or a template without substitutions.
fn argument_text(argument: &Argument<'_>) -> Option<String> {
    match argument.as_expression()?.get_inner_expression() {
        Expression::StringLiteral(literal) => Some(literal.value.to_string()),
        Expression::TemplateLiteral(template) if template.expressions.is_empty() => template
            .quasis
            .first()
            .and_then(|quasi| quasi.value.cooked.as_ref())
            .map(|cooked| cooked.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commonjs_requires_exports_and_reexports_are_found_as_nodes_lexer_finds_them() {
        let source = r#"'use strict';
if (process.env.NODE_ENV === 'production') { module.exports = require('./cjs/p.js'); }
else { module.exports = require(`./cjs/d.js`); }
exports.useState = function () {};
module.exports.version = '1';
Object.defineProperty(exports, "__esModule", { value: true });
__exportStar(require("./more"), exports);
const lazy = require(name);
const text = "require('not-a-call')";
"#;
        let facts = analyze("node_modules/p/index.js", source, NodeEnv::Development);
        assert_eq!(facts.format(), Format::CommonJs);
        let required: Vec<&str> = facts.requires.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(
            required,
            ["./cjs/d.js", "./more"],
            "the production branch is dead"
        );
        assert_eq!(facts.dynamic_requires.len(), 1);
        assert_eq!(facts.reexports, ["./cjs/d.js", "./more"]);
        let exports: Vec<&str> = facts.exports.iter().map(String::as_str).collect();
        assert_eq!(exports, ["__esModule", "useState", "version"]);
        assert_eq!(facts.node_env.len(), 1);
        let production = analyze("node_modules/p/index.js", source, NodeEnv::Production);
        let required: Vec<&str> = production
            .requires
            .iter()
            .map(|(s, _)| s.as_str())
            .collect();
        assert_eq!(required, ["./cjs/p.js", "./more"]);
        let ternary = "module.exports = 'production' !== process.env.NODE_ENV ? require('./d') : require('./p');";
        let required = analyze("t.js", ternary, NodeEnv::Production).requires;
        assert_eq!(
            required.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
            ["./p"]
        );
        let (start, end) = facts.node_env[0];
        assert_eq!(&source[start..end], "process.env.NODE_ENV");
    }

    #[test]
    fn module_syntax_mjs_and_json_decide_the_format() {
        assert_eq!(
            analyze("a.js", "export const a = 1;", NodeEnv::Development).format(),
            Format::Module
        );
        assert_eq!(
            analyze("a.mjs", "const a = 1;", NodeEnv::Development).format(),
            Format::Module
        );
        assert_eq!(
            analyze(
                "a.js",
                "module.exports = { a: 1, b };",
                NodeEnv::Development
            )
            .format(),
            Format::CommonJs
        );
        assert_eq!(
            analyze("a.json", "{}", NodeEnv::Development).format(),
            Format::Json
        );
        let object = analyze(
            "a.js",
            "module.exports = { a: 1, b, c() {} };",
            NodeEnv::Development,
        );
        assert_eq!(
            object.exports.into_iter().collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }
}
