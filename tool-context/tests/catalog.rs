//! Discovery, paging and provider exports under the allowlist.

use serde_json::{Value, json};
use tool_context::{ListToolsError, Tool, ToolInvocation, ToolRegistry};
use tool_protocol::export::{ExportError, OpenAiExportOptions};
use tool_protocol::paging::{MaxPages, list_all_tools};
use tool_protocol::{ToolCallError, ToolDefinition, ToolListRequest};

fn tool(name: &str) -> Tool {
    Tool::new(
        ToolDefinition::new(name, "t", json!({"type": "object", "required": ["x"]})),
        |_: Value, _: ToolInvocation| async { Ok::<_, ToolCallError>(()) },
    )
}

fn names(tools: &[ToolDefinition]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name.as_str()).collect()
}

fn paged(page_size: usize) -> ToolRegistry {
    ToolRegistry::builder()
        .tools(["a.one", "a.two", "hidden", "b.three", "b.four", "c.five"].map(tool))
        .allowed_tool_names([
            "a.one",
            "a.two",
            "b.three",
            "b.four",
            "c.five",
            "not.registered",
        ])
        .page_size(page_size)
        .build()
        .unwrap()
}

#[test]
fn pages_follow_opaque_cursors_to_the_end() {
    let registry = paged(2);
    let first = registry
        .list_tools(Some(ToolListRequest::default()))
        .unwrap();
    assert_eq!(names(&first.tools), ["a.one", "a.two"]);
    assert_eq!(first.next_cursor.as_deref(), Some("offset:2"));
    let fetched = list_all_tools(
        |request| registry.list_tools(Some(request)),
        MaxPages::default(),
    )
    .unwrap();
    assert_eq!(
        names(&fetched),
        ["a.one", "a.two", "b.three", "b.four", "c.five"]
    );
    let last = registry
        .list_tools(Some(ToolListRequest::after("offset:4")))
        .unwrap();
    assert_eq!(
        (names(&last.tools), last.next_cursor),
        (vec!["c.five"], None)
    );
    let exact = paged(5)
        .list_tools(Some(ToolListRequest::default()))
        .unwrap();
    assert_eq!(
        (exact.tools.len(), exact.next_cursor),
        (5, None),
        "a page that ends exactly at the catalog has no cursor"
    );
    let end = registry
        .list_tools(Some(ToolListRequest::after("offset:5")))
        .unwrap();
    assert!(end.tools.is_empty());
}

#[test]
fn bad_cursors_and_requests_are_errors() {
    let registry = paged(2);
    for cursor in [
        "offset:6",
        "offset:-1",
        "offset:01",
        "page:1",
        "offset:",
        "offset: 1",
    ] {
        assert_eq!(
            registry.list_tools(Some(ToolListRequest::after(cursor))),
            Err(ListToolsError::InvalidCursor),
            "{cursor}"
        );
    }
    assert!(matches!(
        registry.list_tools_value(Some(&Value::Null)),
        Err(ListToolsError::InvalidRequest(_))
    ));
    assert!(matches!(
        registry.list_tools_value(Some(&json!({"method": "tools/call"}))),
        Err(ListToolsError::InvalidRequest(_))
    ));
    assert!(matches!(
        registry.list_tools_value(Some(
            &json!({"method": "tools/list", "params": {"cursor": 2}})
        )),
        Err(ListToolsError::InvalidRequest(_))
    ));
    let page = registry
        .list_tools_value(Some(
            &json!({"method": "tools/list", "params": {"cursor": "offset:2"}}),
        ))
        .unwrap();
    assert_eq!(names(&page.tools), ["b.three", "b.four"]);
    assert_eq!(
        registry.list_tools_value(None).unwrap().tools.len(),
        5,
        "no request: the complete catalog"
    );
    assert_eq!(registry.list_tools(None).unwrap().tools.len(), 5);
}

#[test]
fn without_a_page_size_every_request_gets_the_complete_catalog() {
    let registry = ToolRegistry::builder()
        .tools(["a", "b", "c"].map(tool))
        .build()
        .unwrap();
    let all = registry
        .list_tools(Some(ToolListRequest::after("anything")))
        .unwrap();
    assert_eq!((all.tools.len(), all.next_cursor), (3, None));
}

#[test]
fn exports_cover_the_visible_catalog_only() {
    let registry = paged(2);
    assert_eq!(
        names(&registry.to_mcp_tools()),
        names(&registry.list_all_tools())
    );
    let openai = registry.to_openai_tools(&OpenAiExportOptions::default());
    let openai_names: Vec<_> = openai
        .iter()
        .map(|tool| tool.function.name.as_str())
        .collect();
    assert_eq!(
        openai_names,
        ["a_one", "a_two", "b_three", "b_four", "c_five"]
    );
    assert_eq!(
        openai[0].function.parameters,
        json!({"type": "object", "required": ["x"]}),
        "schemas are kept as is"
    );
    assert_eq!(
        registry.provider_tool_names().canonical_name("b_three"),
        Some("b.three")
    );
    assert_eq!(
        registry.provider_tool_names().canonical_name("hidden"),
        None
    );
    assert_eq!(registry.to_anthropic_tools().len(), 5);
    assert_eq!(
        names(
            &registry
                .to_mcp_tools_filtered(&["c.five", "a.one"])
                .unwrap()
        ),
        ["a.one", "c.five"]
    );
    assert_eq!(
        registry.to_mcp_tools_filtered(&["hidden"]),
        Err(ExportError::NotAvailable("hidden".into()))
    );
    assert!(
        registry
            .to_openai_tools_filtered(&["hidden"], &OpenAiExportOptions::default())
            .is_err()
    );
    assert!(registry.to_anthropic_tools_filtered(&["toString"]).is_err());
    assert_eq!(
        registry
            .to_openai_tools_filtered(&["a.two"], &OpenAiExportOptions { strict: true })
            .unwrap()[0]
            .function
            .strict,
        Some(true)
    );
}
