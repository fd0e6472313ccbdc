//! Criterion benchmarks live in `benches/benches/`; this library target is intentionally empty.
