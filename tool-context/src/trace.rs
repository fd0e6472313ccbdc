//! [`TraceId`]: the registry-assigned id of one call, as handlers see it.
//!
//! A call's trace id is a random part drawn once per registry and the call's sequence
//! number in it, so it is unique across registries without a random draw per call. It is a
//! pair of numbers rather than text: every call hands one to its handler, and most handlers
//! never print it, so the text is written only when something asks (an event, a log line).

use std::fmt;

/// Longest text: 16 hex digits, `-`, and up to 20 decimal digits.
const MAX_TEXT_LEN: usize = 16 + 1 + 20;

/// The id of one call, written `<16 hex digits of the registry>-<call sequence>`; its
/// events carry that text as `traceId`.
///
/// ```
/// use tool_context::TraceId;
///
/// let id = TraceId::new(0x2a, 7);
/// assert_eq!(id.to_string(), "000000000000002a-7");
/// assert_eq!(id, "000000000000002a-7");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId {
    registry: u64,
    sequence: u64,
}

impl TraceId {
    /// The id of call `sequence` of the registry drawn as `registry` (make your own to test
    /// a handler).
    #[must_use]
    pub const fn new(registry: u64, sequence: u64) -> Self {
        Self { registry, sequence }
    }

    /// The registry's random part.
    #[must_use]
    pub const fn registry(&self) -> u64 {
        self.registry
    }

    /// The call's sequence number in its registry (from 0).
    #[must_use]
    pub const fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Writes the text into `buffer` without the formatting machinery; returns its length.
    fn write(&self, buffer: &mut [u8; MAX_TEXT_LEN]) -> usize {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (pair, byte) in buffer[..16]
            .chunks_exact_mut(2)
            .zip(self.registry.to_be_bytes())
        {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0xf)];
        }
        buffer[16] = b'-';
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(self.sequence).as_bytes();
        buffer[17..17 + digits.len()].copy_from_slice(digits);
        17 + digits.len()
    }

    /// Calls `with` on the text.
    fn with_text<T>(&self, with: impl FnOnce(&str) -> T) -> T {
        let mut buffer = [0; MAX_TEXT_LEN];
        let len = self.write(&mut buffer);
        // Hex digits, `-` and decimal digits are ASCII.
        with(std::str::from_utf8(&buffer[..len]).unwrap_or_default())
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

impl fmt::Debug for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.debug_tuple("TraceId").field(&text).finish())
    }
}

impl From<TraceId> for String {
    fn from(id: TraceId) -> Self {
        id.with_text(str::to_owned)
    }
}

impl PartialEq<str> for TraceId {
    fn eq(&self, other: &str) -> bool {
        self.with_text(|text| text == other)
    }
}

impl PartialEq<&str> for TraceId {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for TraceId {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl PartialEq<TraceId> for String {
    fn eq(&self, other: &TraceId) -> bool {
        other == self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_sixteen_hex_digits_a_dash_and_the_sequence() {
        assert_eq!(TraceId::new(0, 0).to_string(), "0000000000000000-0");
        let widest = TraceId::new(u64::MAX, u64::MAX);
        assert_eq!(
            String::from(widest),
            format!("ffffffffffffffff-{}", u64::MAX)
        );
        assert_eq!(widest.to_string().len(), MAX_TEXT_LEN);
        let id = TraceId::new(0x0123_4567_89ab_cdef, 42);
        assert_eq!(id.to_string(), "0123456789abcdef-42");
        assert_eq!(format!("{id:?}"), "TraceId(\"0123456789abcdef-42\")");
        assert_eq!((id.registry(), id.sequence()), (0x0123_4567_89ab_cdef, 42));
    }

    #[test]
    fn it_equals_its_text_only() {
        let id = TraceId::new(0xff, 3);
        assert_eq!(id, "00000000000000ff-3");
        assert_eq!(String::from("00000000000000ff-3"), id);
        assert_ne!(id, "00000000000000ff-30");
        assert_ne!(id, TraceId::new(0xff, 4));
    }
}
