/** Peak resident set size of this process so far, bytes (getrusage ru_maxrss). It only grows:
 *  a script measures the small-memory case first, or says the figure includes its inputs. */
export function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024
}
