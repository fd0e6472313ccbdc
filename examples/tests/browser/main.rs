//! The studio's pages in a real headless Chromium (through ChromeDriver): one test binary for
//! the browser suites, each a module named for the page or feature it drives.

#[path = "../support/mod.rs"]
pub mod support;

mod browser_code_editor;
mod browser_controls;
mod browser_design;
mod browser_edit_together;
mod browser_edit_together_pages;
mod browser_editor;
mod browser_folder;
mod browser_live_css;
mod browser_mcp_servers;
mod browser_pages;
mod browser_parity;
mod browser_providers;
mod browser_security;
mod browser_streaming;
mod browser_studio;
mod browser_web;
