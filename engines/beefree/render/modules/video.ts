import { resolveNode } from '../../format/nodes.js';
import type { ModuleBuilder } from '../context.js';
import { element } from '../markup.js';
import { textContent } from '../mjml-tree.js';
import { paddingAttributes, str, text } from '../values.js';

/**
 * video -> its thumbnail (mj-image) linked to the video: mail clients do not play video. The
 * thumbnail is `thumbSrc`, else YouTube's own still for a YouTube address; with neither, a
 * plain link to the video. No play-button overlay is drawn (it would need image compositing).
 */
export const video: ModuleBuilder = (m, lines) => {
  const v = resolveNode('video', m.content, 'video');
  const src = str(v.src);
  const thumbnail = str(v.thumbSrc) ?? youtubeStill(src);
  if (thumbnail !== undefined) {
    return [
      lines.node('mj-image', { src: thumbnail, href: src, target: src ? '_blank' : undefined, alt: text(v.alt), ...paddingAttributes(m.style) }, [], m.origin),
    ];
  }
  if (src === undefined) return [];
  return [
    lines.leaf(
      'mj-text',
      { ...paddingAttributes(m.style), align: 'center', color: m.inherited.color },
      element('a', { href: src, target: '_blank', style: `color:${m.inherited.linkColor};` }, textContent(str(v.alt) ?? src)),
      m.origin,
    ),
  ];
};

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'youtu.be', 'www.youtube-nocookie.com']);

/** https://img.youtube.com/vi/<id>/hqdefault.jpg for watch?v=, youtu.be/, /embed/ and /shorts/ addresses. */
export function youtubeStill(src: string | undefined): string | undefined {
  if (src === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return undefined;
  }
  if (!YOUTUBE_HOSTS.has(url.hostname.toLowerCase())) return undefined;
  const path = url.pathname.split('/').filter((p) => p !== '');
  const id =
    url.hostname.toLowerCase() === 'youtu.be'
      ? path[0]
      : path[0] === 'watch'
        ? (url.searchParams.get('v') ?? undefined)
        : path[0] === 'embed' || path[0] === 'shorts' || path[0] === 'v'
          ? path[1]
          : undefined;
  return id !== undefined && /^[A-Za-z0-9_-]{6,20}$/.test(id) ? `https://img.youtube.com/vi/${id}/hqdefault.jpg` : undefined;
}
