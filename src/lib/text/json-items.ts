// The items of an ActivityStreams collection file (`{"...": ..., "orderedItems": [item, item, ...]}`), taken out one by
// one from a stream of text without parsing the whole file: an archive's outbox.json can hold tens of MB, more than is
// wise to hold as one string and its parsed objects at once. Each item's JSON text is handed out whole, to be parsed on
// its own later. Only the top-level object's `orderedItems` (or `items`) arrays are read; everything else is skipped.
// Every such array is read, not only the first: Mastodon 4.0's BackupService wrote its outbox as
// `..."orderedItems":[],"orderedItems":[item, ...]}` (the serializer's empty list, then the streamed one under the same
// key), which JSON.parse reads as the second. Items read twice are imported once (keyed by their URI).

export class JsonItemsError extends Error {}

export interface SplitLimits {
  /** Longest item (characters). */
  maxItemChars: number;
  /** Most items. */
  maxItems: number;
}

/** A splitter's state between two pieces of text (CollectionItemSplitter.snapshot). */
export interface SplitterState {
  depth: number;
  inString: boolean;
  escape: boolean;
  str: string;
  strStart: number;
  lastString: string;
  key: string;
  inItems: boolean;
  item: string;
  started: boolean;
  count: number;
}

export class CollectionItemSplitter {
  private depth = 0;
  private inString = false;
  private escape = false;
  /** The last string closed at depth 1 (a key, once a colon follows), and the key of the value being read. */
  private str = "";
  private strStart = -1;
  private lastString = "";
  private key = "";
  private inItems = false;
  private item = "";
  private started = false;
  private count = 0;

  private readonly limits: SplitLimits;

  constructor(limits: SplitLimits) {
    this.limits = limits;
  }

  /** Feeds the next piece of text; returns the items completed in it. */
  push(text: string): string[] {
    const out: string[] = [];
    let itemFrom = this.inItems && this.item.length > 0 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (ch === 92) this.escape = true;
        else if (ch === 34) {
          this.inString = false;
          if (this.depth === 1 && !this.inItems) {
            this.lastString = this.str + text.slice(Math.max(this.strStart, 0), i);
            this.str = "";
            this.strStart = -1;
          }
        }
        continue;
      }
      switch (ch) {
        case 34: // "
          this.inString = true;
          if (this.depth === 1 && !this.inItems) {
            this.str = "";
            this.strStart = i + 1;
          }
          if (this.inItems && this.depth === 2 && itemFrom < 0) itemFrom = i;
          break;
        case 58: // :
          if (this.depth === 1) this.key = this.lastString;
          break;
        case 123: // {
        case 91: // [
          if (this.depth === 0) {
            if (ch !== 123) throw new JsonItemsError("not a JSON object");
            this.started = true;
          }
          if (this.inItems && this.depth === 2 && itemFrom < 0) itemFrom = i;
          this.depth++;
          if (ch === 91 && this.depth === 2 && !this.inItems && (this.key === "orderedItems" || this.key === "items")) {
            this.inItems = true;
            itemFrom = -1;
          }
          break;
        case 125: // }
        case 93: // ]
          if (this.depth === 0) throw new JsonItemsError("malformed JSON");
          if (this.inItems && this.depth === 2) {
            // the items array closes
            if (ch !== 93) throw new JsonItemsError("malformed JSON");
            if (itemFrom >= 0) this.emit(out, this.item + text.slice(itemFrom, i));
            itemFrom = -1;
            this.item = "";
            this.inItems = false;
          }
          this.depth--;
          break;
        case 44: // ,
          if (this.inItems && this.depth === 2) {
            this.emit(out, this.item + text.slice(Math.max(itemFrom, 0), i));
            this.item = "";
            itemFrom = -1;
          }
          break;
        default:
          if (this.inItems && this.depth === 2 && itemFrom < 0 && ch > 32) itemFrom = i;
      }
    }
    if (this.inString && this.depth === 1 && !this.inItems && this.strStart >= 0) {
      this.str += text.slice(this.strStart);
      this.strStart = 0;
    }
    if (this.inItems && itemFrom >= 0) {
      this.item += text.slice(itemFrom);
      if (this.item.length > this.limits.maxItemChars) throw new JsonItemsError("an item of the collection is too large");
    }
    return out;
  }

  private emit(out: string[], raw: string): void {
    const t = raw.trim();
    if (!t) return;
    if (t.length > this.limits.maxItemChars) throw new JsonItemsError("an item of the collection is too large");
    if (++this.count > this.limits.maxItems) throw new JsonItemsError(`the collection has more than ${this.limits.maxItems} items`);
    out.push(t);
  }

  /**
   * Where the splitter stands between two pieces of text, to carry to another invocation: `restore` on a new splitter
   * fed the text after the same point goes on exactly as this one would (every field is plain data).
   */
  snapshot(): SplitterState {
    return {
      depth: this.depth,
      inString: this.inString,
      escape: this.escape,
      str: this.str,
      strStart: this.strStart,
      lastString: this.lastString,
      key: this.key,
      inItems: this.inItems,
      item: this.item,
      started: this.started,
      count: this.count,
    };
  }

  restore(s: SplitterState): void {
    Object.assign(this, s);
  }

  /** The text ended: it must have been one whole object. */
  end(): void {
    if (!this.started || this.depth !== 0 || this.inString) throw new JsonItemsError("truncated JSON");
  }
}
