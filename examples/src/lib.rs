//! The bundled studio and command-line tools.
