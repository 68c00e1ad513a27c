import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
/** Gitignored (`test-results/` in the root .gitignore). */
export const SCREENSHOT_DIR = resolve(here, '../../../../test-results/browser');
export const CHROMIUM = process.env.BUBBLE_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Runs one step of a test; on failure saves a screenshot named after it, then rethrows (BUBBLE_SCREENSHOTS=1: after every step). */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Debian's Chromium, headless, with a new empty profile; nothing is downloaded.
 * `ignoreHTTPSErrors`: accept a self-signed certificate (the nginx test's).
 */
export async function openBrowser(suite: string, options: { ignoreHTTPSErrors?: boolean } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'bubble-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 800 },
    ignoreHTTPSErrors: options.ignoreHTTPSErrors ?? false,
  });
  context.setDefaultTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return {
    context,
    page,
    async step(name, fn) {
      try {
        const result = await fn();
        // BUBBLE_SCREENSHOTS=1 keeps a picture of every step, for reviewing what the UI showed.
        if (process.env.BUBBLE_SCREENSHOTS === '1') {
          mkdirSync(SCREENSHOT_DIR, { recursive: true });
          await page
            .screenshot({ path: join(SCREENSHOT_DIR, `${suite}--${name.replace(/[^a-z0-9]+/gi, '-')}.ok.png`) })
            .catch(() => undefined);
        }
        return result;
      } catch (error) {
        mkdirSync(SCREENSHOT_DIR, { recursive: true });
        const file = join(SCREENSHOT_DIR, `${suite}--${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
        await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
        const extra = problems.length > 0 ? `\n${problems.join('\n')}` : '';
        (error as Error).message = `step "${name}" failed (screenshot: ${file}): ${(error as Error).message}${extra}`;
        throw error;
      }
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a sign-in link (`…#token=bubble_user_…`) and confirms it with **Sign in**, as a person
 * does: a link never signs a browser in by itself (protocol.md, "Authentication"). A link with
 * the token the tab already uses asks nothing, so this waits for whichever comes first.
 */
export async function openSignInLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  const confirm = page.locator('.confirm-link').getByRole('button', { name: 'Sign in', exact: true });
  // Attached, not visible: a phone's top bar hides "Signed in as".
  await confirm.or(page.getByTestId('me')).first().waitFor({ state: 'attached' });
  if ((await confirm.count()) > 0) await confirm.click();
}
