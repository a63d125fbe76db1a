// The demo page in headless Chromium for the browser tests (not a test file): Debian's
// /usr/bin/chromium driven by playwright-core, against web-demo/server.mjs on a free port, with a
// profile of its own (local storage survives a reload) and the page's errors collected.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { serve } from '../../web-demo/server.mjs';

/**
 * Opens the page at viewport { width, height }: { page, server, pageErrors (page errors and
 * console errors, as text), idle() (resolves once no job runs and the graph is laid out),
 * close() }.
 */
export async function openDemo(viewport) {
  const server = await serve({ port: 0 });
  const profile = mkdtempSync(join(tmpdir(), 'onemodel-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    acceptDownloads: true,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(60_000);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
  const idle = () => page.waitForFunction(() => document.querySelector('#model-select').options.length > 0
    && !document.body.classList.contains('busy') && !document.querySelector('#graph').classList.contains('laying-out'));
  await page.goto(server.url);
  await idle();
  return {
    page, server, pageErrors, idle,
    async close() {
      await context.close();
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
