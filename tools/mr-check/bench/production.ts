// Imported first by the benchmark, before graphql-js reads it: the check runs
// as its bin runs it (the launcher sets NODE_ENV=production unless told
// otherwise), and so does the bundle server of the affected dry-run alone.
process.env.NODE_ENV ??= 'production';
