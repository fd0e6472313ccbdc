//! A bounded OpenRouter chat-completions tool loop.
