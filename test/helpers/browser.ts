import fs from 'node:fs';
import chromium from '@sparticuz/chromium';
import puppeteer, {type Browser} from 'puppeteer-core';

/**
 * A real headless Chromium for the browser tests, with no manual step: the one the devDependency
 * `@sparticuz/chromium` ships inside its npm package (unpacked into the system's temporary folder on
 * first use), or the one `CHROMIUM_PATH` names. A missing or broken browser fails the test, saying
 * why: it is never skipped.
 */
export async function browserPath(): Promise<string> {
  const named = process.env.CHROMIUM_PATH;
  if (named) {
    if (!fs.existsSync(named)) throw new Error(`CHROMIUM_PATH names ${named}, which does not exist`);
    return named;
  }
  return chromium.executablePath();
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: await browserPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
