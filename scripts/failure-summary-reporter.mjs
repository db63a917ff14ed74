// A node:test reporter that writes only the failed tests, each with its file and the first lines of its error. The
// test script prints these summaries after every suite has run, so that the end of a long CI log says what failed
// and why (the spec reporter's report of a failure may be thousands of lines above the end).
const LINES = 40;

/** The error a failed test threw (node:test wraps it as the cause of an ERR_TEST_FAILURE). */
function reasonOf(error) {
  const e = error?.cause ?? error;
  const text = e instanceof Error ? (e.stack ?? e.message) : String(e);
  // The message, then at most three frames of the project's own files (not Node's internals or dependencies).
  const lines = text.split('\n');
  const message = lines.filter((l) => !/^\s+at /.test(l));
  const own = lines.filter((l) => /^\s+at /.test(l) && !/node:|node_modules|\(<anonymous>\)|primordials/.test(l)).slice(0, 3);
  return [...message.slice(0, LINES), ...own].join('\n').trimEnd();
}

export default async function* failureSummary(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail' || event.data.details?.type === 'suite') continue;
    const { name, file, details } = event.data;
    failed.push(`✖ ${name}${file ? ` (${file.replace(`${process.cwd()}/`, '')})` : ''}\n${reasonOf(details?.error).replace(/^/gm, '    ')}\n`);
  }
  if (failed.length) yield failed.join('\n');
}
