/** What a command may touch of the process: given as a parameter so tests run commands
 *  in-process, and so nothing below src/cli/ reads process.env or process.argv. */
export interface CliContext {
  readonly stdout: { write(s: string): unknown; isTTY?: boolean }
  readonly stderr: { write(s: string): unknown; isTTY?: boolean }
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  /** Aborted on Ctrl+C. */
  readonly signal: AbortSignal
  /** Binary stdin and stdout for `-` file arguments (tests); when absent, the process's own. */
  readonly stdio?: { readonly stdin: AsyncIterable<Uint8Array>; readonly stdout: { write(bytes: Uint8Array): Promise<void> } }
}
