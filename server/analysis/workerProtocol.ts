/** Messages between the language server's main thread and its analysis workers (structured-clone data only). */
import type { AnalyzeInput, DocumentAnalysis } from './analyze';
import type { FileChange } from './host';

export type ToWorker =
  | { readonly type: 'folders'; readonly root: string | undefined; readonly folders: readonly string[] }
  /** An open document's text (undefined when it was closed). */
  | { readonly type: 'document'; readonly uri: string; readonly text: string | undefined }
  | { readonly type: 'file'; readonly uri: string; readonly change: FileChange }
  | { readonly type: 'analyze'; readonly id: number; readonly input: AnalyzeInput };

export type FromWorker =
  | { readonly type: 'result'; readonly id: number; readonly analysis: DocumentAnalysis }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };
