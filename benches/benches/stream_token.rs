//! The studio's first visible token (issue 37), in a real headless Chromium: from the moment
//! a loopback provider writes the first text chunk of a reply to the first frame painted with
//! that text in the chat at `/`. Both ends read the same wall clock (the provider
//! `SystemTime`, the page `performance.timeOrigin + performance.now()`).
//!
//! - `streamed`: the provider streams the reply (its first chunk, then nine more 20 ms apart);
//! - baseline, interleaved in the same run: the provider answers the same reply as one JSON body
//!   (a provider that does not stream), so the text shows only when the run completes.
//!
//! Prints the p50s and their ratio. Goal: the first streamed token painted ≤ 30 ms p50 after
//! the provider sent it.
//!
//! `cargo bench -p workspace-benches --bench stream_token`

#[path = "../../examples/tests/support/browser/mod.rs"]
pub mod browser_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::response::Response;
use axum::serve::ListenerExt;
use browser_support::studio::StudioPage;
use serde_json::{Value, json};

/// Samples per path.
const SAMPLES: usize = 20;

/// Records, for the page's current marker, when the first event holding it reached the page
/// (`arrived`, at its `JSON.parse`), when a text holding it entered the chat (`dom`),
/// the start of the frame that paints it (`frame`, the first animation frame after) and the
/// start of the next frame (`painted`, when the first has certainly been painted).
const INSTRUMENT: &str = r#"
const bench = window.tokenBench = { marker: null, times: {} };
const now = () => performance.timeOrigin + performance.now();
const holds = (node) => bench.marker && (node.textContent ?? '').includes(bench.marker);
const realParse = JSON.parse;
JSON.parse = function (text, reviver) {
  const marker = bench.marker;
  if (marker && typeof text === 'string' && text.includes(marker)) {
    (bench.arrived ??= {})[marker] ??= now();
  }
  return realParse(text, reviver);
};
new MutationObserver((mutations) => {
  const marker = bench.marker;
  if (!marker || bench.times[marker] !== undefined) return;
  const hit = mutations.some((m) => holds(m.target) || [...m.addedNodes].some(holds));
  if (!hit) return;
  const times = bench.times[marker] = { dom: now() };
  requestAnimationFrame(() => {
    times.frame = now();
    requestAnimationFrame(() => { times.painted = now(); });
  });
}).observe(document.getElementById('chat-log'), { childList: true, subtree: true, characterData: true });
return true;
"#;

/// Milliseconds from the provider's write to the event reaching the page, to the text in the
/// DOM, to the frame that paints it, and to the frame after.
type Sample = [f64; 4];

fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs_f64()
        * 1000.0
}

/// What the provider answers next, and when it wrote the marker.
#[derive(Default)]
struct Provider {
    marker: String,
    streamed: bool,
    sent_at: Option<f64>,
}

fn chunk(text: &str) -> Bytes {
    let payload = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
    Bytes::from(format!("data: {payload}\n\n"))
}

fn reply(provider: &Arc<Mutex<Provider>>) -> Response {
    let (marker, streamed) = {
        let state = provider.lock().unwrap();
        (state.marker.clone(), state.streamed)
    };
    let rest: Vec<String> = (0..9).map(|i| format!(" word{i}")).collect();
    if !streamed {
        provider.lock().unwrap().sent_at = Some(epoch_ms());
        let text = format!("{marker}{}", rest.concat());
        let body = json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]});
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
    }
    let provider = Arc::clone(provider);
    let pieces = std::iter::once(marker).chain(rest);
    let body = futures::stream::unfold((pieces, 0), move |(mut pieces, sent)| {
        let provider = Arc::clone(&provider);
        async move {
            if sent > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let bytes = match pieces.next() {
                Some(piece) => {
                    if sent == 0 {
                        provider.lock().unwrap().sent_at = Some(epoch_ms());
                    }
                    chunk(&piece)
                }
                None if sent == 10 => Bytes::from(format!(
                    "data: {}\n\ndata: [DONE]\n\n",
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                )),
                None => return None,
            };
            Some((Ok::<_, std::io::Error>(bytes), (pieces, sent + 1)))
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(body))
        .unwrap()
}

async fn serve(provider: Arc<Mutex<Provider>>) -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let provider = Arc::clone(&provider);
            async move { reply(&provider) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!(
        "http://127.0.0.1:{}/v1",
        listener.local_addr().unwrap().port()
    );
    // The host is to receive each chunk when it is written: without TCP_NODELAY the first
    // chunk waits behind the unacknowledged headers for the host's delayed ACK.
    let listener = listener.tap_io(|tcp| tcp.set_nodelay(true).expect("TCP_NODELAY"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

async fn sample(
    page: &StudioPage,
    provider: &Arc<Mutex<Provider>>,
    n: usize,
    streamed: bool,
) -> Sample {
    let marker = format!("tok{n}x{}", u8::from(streamed));
    {
        let mut state = provider.lock().unwrap();
        state.marker = marker.clone();
        state.streamed = streamed;
        state.sent_at = None;
    }
    page.browser
        .eval(
            "window.tokenBench.marker = arguments[0]; return true;",
            json!([marker]),
        )
        .await;
    page.browser.type_into("#prompt", "say something").await;
    page.browser.click("#send-prompt").await;
    let times = page
        .browser
        .wait_for(
            "the marker painted",
            "const b = window.tokenBench; const t = b.times[b.marker]; return t?.painted ? [b.arrived[b.marker], t.dom, t.frame, t.painted] : null;",
        )
        .await;
    page.browser
        .wait_for(
            "the run to end",
            "return !document.getElementById('send-prompt').disabled;",
        )
        .await;
    let sent = provider
        .lock()
        .unwrap()
        .sent_at
        .expect("the provider answered");
    let at = |index: usize| times[index].as_f64().expect("milliseconds") - sent;
    [at(0), at(1), at(2), at(3)]
}

/// The p50 of each of the times.
fn p50s(samples: &[Sample]) -> Sample {
    let mut out = [0.0; 4];
    for (index, slot) in out.iter_mut().enumerate() {
        let mut column: Vec<f64> = samples.iter().map(|sample| sample[index]).collect();
        column.sort_by(f64::total_cmp);
        *slot = column[column.len() / 2];
    }
    out
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument other than this bench's name skips it.
    let filter = std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'));
    if filter.is_some_and(|filter| !"stream_token".contains(filter.as_str())) {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let provider = Arc::new(Mutex::new(Provider::default()));
        let base = serve(Arc::clone(&provider)).await;
        let page = StudioPage::start(1280, 800, "").await;
        page.browser
            .wait_for("the page to load", "return document.body.dataset.ready === 'true';")
            .await;
        let settings: Value = page
            .http
            .put(format!("{}api/settings", page.studio.url()))
            .header("x-studio-token", page.studio.token())
            .json(&json!({"provider": "llamacpp", "baseUrl": base, "model": "smol"}))
            .send()
            .await
            .expect("PUT /api/settings")
            .json()
            .await
            .expect("settings JSON");
        assert!(settings.get("error").is_none(), "{settings}");
        page.browser
            .eval(
                "const select = document.getElementById('agent-select'); select.value = 'openrouter'; select.dispatchEvent(new Event('change')); return true;",
                json!([]),
            )
            .await;
        page.browser.eval(INSTRUMENT, json!([])).await;
        let (mut streamed, mut whole): (Vec<Sample>, Vec<Sample>) = (Vec::new(), Vec::new());
        for n in 0..SAMPLES {
            streamed.push(sample(&page, &provider, n, true).await);
            whole.push(sample(&page, &provider, n, false).await);
        }
        let (streamed, whole) = (p50s(&streamed), p50s(&whole));
        println!(
            "stream_token/first_token: p50 after the provider sent it: at the page {:.1} ms, in the DOM {:.1} ms, its frame {:.1} ms, the frame after {:.1} ms; the same reply as one JSON body: {:.1} / {:.1} / {:.1} / {:.1} ms (same run, interleaved); frame ratio {:.2}x over {SAMPLES} samples each",
            streamed[0], streamed[1], streamed[2], streamed[3], whole[0], whole[1], whole[2], whole[3], streamed[2] / whole[2]
        );
        page.close().await;
    });
}
