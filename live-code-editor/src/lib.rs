//! Live web-coding engine: workspace model, document manager, folder adapter and preview compiler.
