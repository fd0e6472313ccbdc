// Counts clicks on the call-to-action; the preview bridge reports runtime errors to the studio.
const button = document.querySelector('#cta');
const count = document.querySelector('#count');
let clicks = 0;

button?.addEventListener('click', () => {
  clicks += 1;
  count.textContent = String(clicks);
});
