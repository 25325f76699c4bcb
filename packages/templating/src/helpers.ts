/**
 * The outside world a template may reach, injected by the caller. Every member
 * is optional: a template calling a helper the caller did not provide fails
 * with a clear error. The integration wires these to the secret reader,
 * GitHub, the GraphQL client, HTTP and S3.
 */
export interface TemplateHelpers {
  /**
   * All keys of the Vault secret at `path` (`version` undefined = latest), as
   * core's `SecretReader.readAll` returns them. Throw core's
   * `SecretNotFoundError` when the secret does not exist. Called once per
   * (path, version) and render (or run, with a shared `vaultCache`).
   */
  vault?(path: string, version: number | undefined): Promise<Record<string, string>>;
  /** Raw UTF-8 content of `path` in GitHub repository `owner/name` at `ref` (default org token). */
  github?(repo: string, path: string, ref: string): Promise<string>;
  /** Content of the app-interface resource file at `path` (`resources_v1`), for `query()`. */
  resource?(path: string): Promise<string>;
  /** Runs a GraphQL query against app-interface, for `query()`. */
  graphql?(query: string): Promise<Record<string, unknown>>;
  /** Whether an HTTP GET of `url` answers below 404 (TLS verification off, 60 s timeout). */
  url?(url: string): Promise<boolean>;
  /** Content of an S3 object, with the credentials of app-interface AWS account `account`. */
  s3?(account: string, bucket: string, path: string, region: string | undefined): Promise<string>;
  /** Keys under `path` in an S3 bucket. */
  s3Ls?(
    account: string,
    bucket: string,
    path: string,
    region: string | undefined,
  ): Promise<string[]>;
}
