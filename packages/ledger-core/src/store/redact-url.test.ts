import { describe, expect, it } from "vitest";
import { redactUrl, redactUrlsIn } from "./redact-url.js";

describe("redactUrl", () => {
  it("shows a URL without a credential exactly as given", () => {
    for (const url of [
      "sqlite:/tmp/my ledger.db",
      "sqlite:./agent-ledger.db",
      "memory:",
      "postgres://app@db.internal:5432/ledger?schema=agent&sslmode=verify-full",
      "mysql://app@db/ledger?ssl=true",
      "redis://cache:6379/0?keyPrefix=al:",
    ])
      expect(redactUrl(url)).toBe(url);
  });

  it("shows a password as ***, keeping the user name", () => {
    expect(redactUrl("postgres://app:s3cret@db.internal:5432/ledger")).toBe(
      "postgres://app:***@db.internal:5432/ledger",
    );
    expect(redactUrl("mysql://root:s3cret@127.0.0.1:3306/test")).toBe(
      "mysql://root:***@127.0.0.1:3306/test",
    );
    expect(redactUrl("redis://:s3cret@cache:6379/0")).toBe("redis://:***@cache:6379/0");
  });

  it("changes nothing but the secret: the rest is not re-encoded", () => {
    // A SQLite path is taken as is: my%20ledger.db would be another file.
    expect(redactUrl("sqlite:/tmp/my ledger.db?password=s3cret")).toBe(
      "sqlite:/tmp/my ledger.db?password=***",
    );
    expect(redactUrl("redis://:s3cret@cache:6379/0?keyPrefix=al:")).toBe(
      "redis://:***@cache:6379/0?keyPrefix=al:",
    );
    expect(redactUrl("postgres://app:p@ss%2Fword@db/ledger?application_name=my app")).toBe(
      "postgres://app:***@db/ledger?application_name=my app",
    );
  });

  it("hides a password that breaks the URL (an unescaped / or #)", () => {
    const shown = redactUrl("postgres://app:s3cr/t#pw@db.internal:5432/ledger");
    expect(shown).toBe("postgres://app:***@db.internal:5432/ledger");
  });

  it("masks the query parameters that carry a credential, and only those", () => {
    expect(
      redactUrl("postgres://app@db/ledger?sslmode=require&sslpassword=s3cret&schema=agent"),
    ).toBe("postgres://app@db/ledger?sslmode=require&sslpassword=***&schema=agent");
    expect(
      redactUrl("postgres://app@db/ledger?sslkey=/home/app/s3cret.key&sslcert=/home/app/c.crt"),
    ).toBe("postgres://app@db/ledger?sslkey=***&sslcert=/home/app/c.crt");
    expect(redactUrl("redis://cache:6379?password=s3cret&keyPrefix=al:")).toBe(
      "redis://cache:6379?password=***&keyPrefix=al:",
    );
    expect(redactUrl("mysql://app@db/ledger?password2=s3cret&passphrase=s3cret")).toBe(
      "mysql://app@db/ledger?password2=***&passphrase=***",
    );
    // mysql2 reads a JSON value as the option's object: key material.
    expect(redactUrl('mysql://app@db/ledger?ssl={"key":"s3cret"}')).toBe(
      "mysql://app@db/ledger?ssl=***",
    );
    expect(redactUrl("sqlite:/tmp/ledger.db?password=s3cret")).toBe(
      "sqlite:/tmp/ledger.db?password=***",
    );
    // A SQLite URL takes no query (the store refuses it, its message showing the URL as here);
    // %3F is a "?" of the file's name, and a file's name is no credential.
    expect(redactUrl("sqlite:/tmp/ledger.db%3Fpassword=x")).toBe(
      "sqlite:/tmp/ledger.db%3Fpassword=x",
    );
  });

  it("never shows the secret, whatever else the URL holds", () => {
    for (const url of [
      "postgres://app:s3cret@db/ledger?sslkey=s3cret",
      "postgresql://app:s3cret%2Fx@db/ledger",
      "mysql://app:s3cret@db/ledger?password1=s3cret&ssl=%7B%22key%22%3A%22s3cret%22%7D",
      "rediss://user:s3cret@cache:6380/0?token=s3cret",
      "redis://app:s3cr/t#pw@cache.internal:6379/0",
    ])
      expect(redactUrl(url), url).not.toContain("s3cr");
  });

  it("masks the password of a URL whose // is missing or mistyped, or that has no scheme", () => {
    expect(redactUrl("postgres:/app:s3cretPW@127.0.0.1:1/db")).toBe(
      "postgres:/app:***@127.0.0.1:1/db",
    );
    expect(redactUrl("mysql:app:s3cretPW@db/ledger")).toBe("mysql:app:***@db/ledger");
    expect(redactUrl("app:s3cretPW@127.0.0.1:1/db")).toBe("app:***@127.0.0.1:1/db");
    for (const url of [
      "postgres//app:s3cretPW@db/ledger",
      "postgresql:app:s3cr/t#pw@db/ledger",
      "redis:/:s3cretPW@cache:6379",
    ])
      expect(redactUrl(url), url).not.toContain("s3cr");
  });

  it("leaves a path that holds : and @ alone where the scheme names a file", () => {
    for (const url of ["sqlite:./runs/a:b@c.db", "file:/tmp/x:y@z.db", "sqlite:a:b@c.db"])
      expect(redactUrl(url)).toBe(url);
  });
});

describe("redactUrlsIn", () => {
  it("redacts each URL in a text and changes nothing around them", () => {
    const text =
      'Set DB="postgres://app:s3cret@db/x", see (https://h.example/i.png?X-Amz-Credential=AKIA1&w=2). Mail me@x.io: ok';
    expect(redactUrlsIn(text)).toBe(
      'Set DB="postgres://app:***@db/x", see (https://h.example/i.png?X-Amz-Credential=***&w=2). Mail me@x.io: ok',
    );
  });

  it("masks a presigned URL's signature, the part that grants access (S3, GCS, Azure SAS, CloudFront)", () => {
    expect(
      redactUrlsIn(
        "https://b.s3.amazonaws.com/cat.png?X-Amz-Credential=AKIA1%2F20261206&X-Amz-Date=20261206T110000Z&X-Amz-Expires=900&X-Amz-Signature=5ig",
      ),
    ).toBe(
      "https://b.s3.amazonaws.com/cat.png?X-Amz-Credential=***&X-Amz-Date=20261206T110000Z&X-Amz-Expires=900&X-Amz-Signature=***",
    );
    for (const url of [
      "https://storage.googleapis.com/b/cat.png?X-Goog-Date=20261206T110000Z&X-Goog-Signature=5ig",
      "https://acct.blob.core.windows.net/c/cat.png?sv=2024-11-04&se=2026-12-06&sp=r&sig=5ig%3D",
      "https://d1.cloudfront.net/cat.png?Expires=1800000000&Signature=5ig~&Key-Pair-Id=K2",
    ])
      expect(redactUrlsIn(url), url).not.toContain("5ig");
    // Names that only hold the letters are no signature.
    for (const url of ["https://h.example/a?signed=1", "https://h.example/a?design=2&sigma=3"])
      expect(redactUrlsIn(url)).toBe(url);
  });

  it("leaves a text without a secret, an address or a colon as is", () => {
    for (const text of ["a@b.c: d", "https://example.com/a?page=2 and me@x.io", "time: 10:30"])
      expect(redactUrlsIn(text)).toBe(text);
  });
});
