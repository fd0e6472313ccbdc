// Three-way merge of texts, so two writers of one file never lose each other's typing: each
// side's changes against their common base are found (a character diff), and when no change of
// one side touches a change of the other, both are applied. Overlapping changes are a conflict
// the caller shows the person; nothing here ever picks a winner. Also maps a caret through a
// change, so text arriving from elsewhere does not move the person's caret.
//
// A change is `{ from, to, insert }` over the old text (UTF-16 offsets, as the textarea's).

/** Beyond this many edits a diff stops refining and reports the rest as one change. */
const MAX_EDIT_DISTANCE = 1000;
/** Character comparisons one diff may spend (a few ms) before it gives up the same way. */
const MAX_DIFF_WORK = 4_000_000;

/** The changes that turn `a` into `b`: sorted, non-overlapping, over `a`. */
export function diff(a, b) {
  if (a === b) return [];
  let start = 0;
  const shortest = Math.min(a.length, b.length);
  while (start < shortest && a.charCodeAt(start) === b.charCodeAt(start)) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA -= 1;
    endB -= 1;
  }
  return middleChanges(a, b, start, endA, endB);
}

/** The changes between `a[start..endA]` and `b[start..endB]`, offsets over `a`. */
function middleChanges(a, b, start, endA, endB) {
  const whole = [{ from: start, to: endA, insert: b.slice(start, endB) }];
  if (start === endA || start === endB) return whole;
  const path = shortestEditPath(a.slice(start, endA), b.slice(start, endB));
  return path ? changesAlong(path, b, start, endA - start, endB - start) : whole;
}

/**
 * Myers' O(ND) shortest edit script between `a` and `b`: the matched points `[x, y]` in order,
 * or null when more than MAX_EDIT_DISTANCE edits or MAX_DIFF_WORK comparisons are needed (a
 * coarser diff only makes a merge report a conflict where a finer one would not).
 */
function shortestEditPath(a, b) {
  const n = a.length;
  const m = b.length;
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  const trace = [];
  let work = 0;
  for (let d = 0; d <= limit; d += 1) {
    trace.push(v.slice());
    work += 2 * d + 1;
    if (work > MAX_DIFF_WORK) return null;
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
      let x = down ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      const from = x;
      while (x < n && y < m && a.charCodeAt(x) === b.charCodeAt(y)) {
        x += 1;
        y += 1;
      }
      work += x - from;
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, n, m, d);
    }
  }
  return null;
}

/** The matched character pairs of the path found at distance `d`, first to last. */
function backtrack(trace, offset, n, m, d) {
  const matches = [];
  let x = n;
  let y = m;
  for (let step = d; step > 0; step -= 1) {
    const v = trace[step];
    const k = x - y;
    const down = k === -step || (k !== step && v[offset + k - 1] < v[offset + k + 1]);
    const previousK = down ? k + 1 : k - 1;
    const previousX = v[offset + previousK];
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      x -= 1;
      y -= 1;
      matches.push([x, y]);
    }
    x = previousX;
    y = previousY;
  }
  while (x > 0 && y > 0) {
    x -= 1;
    y -= 1;
    matches.push([x, y]);
  }
  return matches.reverse();
}

/** Turns matched pairs of `n` x `m` characters into the changes between them (offsets shifted by `start`). */
function changesAlong(matches, b, start, n, m) {
  const changes = [];
  let x = 0;
  let y = 0;
  const gap = (toX, toY) => {
    if (toX > x || toY > y) changes.push({ from: start + x, to: start + toX, insert: b.slice(start + y, start + toY) });
  };
  for (const [mx, my] of matches) {
    gap(mx, my);
    x = mx + 1;
    y = my + 1;
  }
  gap(n, m);
  return changes;
}

/** `text` with `changes` (sorted, non-overlapping, over `text`) applied. */
export function applyChanges(text, changes) {
  let out = '';
  let at = 0;
  for (const change of changes) {
    out += text.slice(at, change.from) + change.insert;
    at = change.to;
  }
  return out + text.slice(at);
}

const isInsertion = (change) => change.from === change.to;
const same = (one, other) => one.from === other.from && one.to === other.to && one.insert === other.insert;

/**
 * Whether two changes over one base touch the same characters, insert at one point, or insert
 * at an edge of what the other replaced (text typed right after a word someone else rewrote has
 * lost what it was typed against, so the person decides).
 */
function overlaps(one, other) {
  if (same(one, other)) return false;
  if (isInsertion(one) && isInsertion(other)) return one.from === other.from;
  if (isInsertion(one)) return other.from <= one.from && one.from <= other.to;
  if (isInsertion(other)) return one.from <= other.from && other.from <= one.to;
  return one.from < other.to && other.from < one.to;
}

/**
 * Merges `ours` and `theirs`, both edited from `base`: `{ text }` when their changes do not
 * overlap, else `{ conflict: true, ours, theirs }` (the overlapping changes' spans in `base`,
 * so the caller can say where).
 */
export function merge3(base, ours, theirs) {
  if (ours === theirs || theirs === base) return { text: ours };
  if (ours === base) return { text: theirs };
  const mine = diff(base, ours);
  const other = diff(base, theirs);
  for (const one of mine) {
    const clash = other.find((change) => overlaps(one, change));
    if (clash) return { conflict: true, ours: one, theirs: clash };
  }
  const combined = [...mine, ...other.filter((change) => !mine.some((one) => same(one, change)))];
  // Two changes at one point are an insertion before a replacement starting there.
  combined.sort((one, other) => one.from - other.from || Number(!isInsertion(one)) - Number(!isInsertion(other)));
  return { text: applyChanges(base, combined) };
}

/**
 * Where `position` of the old text is after `changes`: shifted by what changed before it, at
 * the end of a change it was inside of, and before an insertion made exactly at it.
 */
export function mapPosition(position, changes) {
  let shift = 0;
  for (const change of changes) {
    if (change.from >= position) break;
    if (change.to > position) return change.from + shift + change.insert.length;
    shift += change.insert.length - (change.to - change.from);
  }
  return position + shift;
}
