// A tiny live page: a pulse counter and a ticking clock, so a script edit shows up at once.
const pulse = document.querySelector('#pulse');
const count = document.querySelector('#pulse-count');
const clock = document.querySelector('#clock');
let pulses = 0;

pulse?.addEventListener('click', () => {
  pulses += 1;
  count.textContent = String(pulses);
});

function tick() {
  if (clock) clock.textContent = new Date().toLocaleTimeString();
}

tick();
setInterval(tick, 1000);
