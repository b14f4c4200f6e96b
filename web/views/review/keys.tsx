import { useEffect, useRef, useState } from 'preact/hooks';
import { batchHref } from '../batch';

const SHORTCUTS = 'icecat.reviewShortcuts';

/** Single-key shortcuts can be turned off (WCAG 2.1.4): a speech user's words must not judge images. */
const shortcutsOn = (): boolean => {
  try {
    return localStorage.getItem(SHORTCUTS) !== 'off';
  } catch {
    return true;
  }
};

/** Whether the single-letter keys are on, remembered in the browser, and the switch that turns them on or off. */
export function useShortcutsSetting(): [boolean, (on: boolean) => void] {
  const [shortcuts, setShortcuts] = useState(shortcutsOn);
  const toggleShortcuts = (on: boolean) => {
    setShortcuts(on);
    try {
      localStorage.setItem(SHORTCUTS, on ? 'on' : 'off');
    } catch {
      // Private mode: the choice lasts for this page only.
    }
  };
  return [shortcuts, toggleShortcuts];
}

interface ReviewKeyActions {
  give: (isCat: boolean) => void;
  takeBack: () => void;
  pass: () => void;
  shortcuts: boolean;
}

/** The keys: y, n, u, → and Escape; not while typing, not with a modifier, not when held down. */
export function useReviewKeys(batchId: string, actions: ReviewKeyActions): void {
  const keys = useRef(actions);
  keys.current = actions;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      const target = e.target as HTMLElement | null;
      if (target?.closest('input:not([type="checkbox"]), textarea, select, [contenteditable], dialog')) return;
      if (e.key === 'Escape') {
        location.hash = batchHref(batchId);
        return;
      }
      const k = keys.current;
      const action =
        e.key === 'ArrowRight'
          ? k.pass
          : !k.shortcuts
            ? undefined
            : { y: () => k.give(true), n: () => k.give(false), u: k.takeBack }[e.key.toLowerCase()];
      if (!action) return;
      e.preventDefault();
      if (!e.repeat) action();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [batchId]);
}

/** The keys review mode answers to, and the switch for the single-letter ones. */
export function KeysPanel({ shortcuts, onToggle }: { shortcuts: boolean; onToggle: (on: boolean) => void }) {
  return (
    <section class="review-keys" aria-labelledby="keys-title">
      <h2 id="keys-title">Keys</h2>
      <dl class="details">
        <dt>
          <kbd>Y</kbd>
        </dt>
        <dd>a cat</dd>
        <dt>
          <kbd>N</kbd>
        </dt>
        <dd>not a cat</dd>
        <dt>
          <kbd>U</kbd>
        </dt>
        <dd>undo the last verdict</dd>
        <dt>
          <kbd>→</kbd>
        </dt>
        <dd>skip, for now</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>back to the batch</dd>
      </dl>
      <label class="check">
        <input type="checkbox" checked={shortcuts} onChange={(e) => onToggle((e.target as HTMLInputElement).checked)} />
        Single-letter keys (Y, N, U)
      </label>
    </section>
  );
}
