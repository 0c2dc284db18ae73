// Records a HAR of a browser session with Playwright (playwright-core
// 1.64.1) driving Debian's Chromium: open the shop page (its page, style
// sheet, script, image and an API call), wait 1.5 s, click buy (a POST of
// JSON). Usage: node record.js URL OUT.har
const { chromium } = require('playwright-core');
(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const context = await browser.newContext({ recordHar: { path: process.argv[3] } });
  const page = await context.newPage();
  await page.goto(process.argv[2]);
  await page.waitForFunction(() => document.getElementById('out').textContent !== '');
  await page.waitForTimeout(1500);
  await page.click('#buy');
  await page.waitForFunction(() => document.getElementById('out').textContent.startsWith('ordered'));
  await context.close();
  await browser.close();
})();
