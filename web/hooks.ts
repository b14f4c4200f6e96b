import { useEffect, useRef, useState } from 'preact/hooks';
import { type Capabilities, capabilities } from './capabilities';

/** Calls `tick` every `ms` while `active` and the tab is visible (live progress without polling hidden tabs). */
export function usePoll(tick: () => void | Promise<void>, ms: number, active: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const run = async () => {
      if (!document.hidden) await Promise.resolve(latest.current()).catch(() => undefined);
      if (!stopped) timer = setTimeout(run, ms);
    };
    timer = setTimeout(run, ms);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [ms, active]);
}

/** Runs `load` when the element comes within `margin` of the viewport (and again whenever `deps` change). */
export function useNearViewport(load: () => void, enabled: boolean, deps: unknown[], margin = '600px') {
  const ref = useRef<HTMLElement>(null);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const el = ref.current;
    if (!el || !enabled) return undefined;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) latest.current();
      },
      { rootMargin: margin },
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [enabled, margin, ...deps]);
  return ref;
}

/** The API's capabilities, once read (null until then). */
export function useCapabilities(): Capabilities | null {
  const [caps, setCaps] = useState<Capabilities | null>(null);
  useEffect(() => {
    let live = true;
    void capabilities().then((c) => live && setCaps(c));
    return () => {
      live = false;
    };
  }, []);
  return caps;
}
