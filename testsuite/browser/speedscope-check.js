// Opens a profile in speedscope in a real browser (Debian's headless
// chromium, driven by puppeteer-core), the way a user would: speedscope's
// static files and the profile served from localhost, the profile loaded
// with #profileURL=. Checks that the import succeeded (no alert, no error
// shown, TITLE in the toolbar: the profile's name, each FUNC listed in the
// Sandwich view's table) and keeps a screenshot of the flame chart.
//   node speedscope-check.js NODE_MODULES PROFILE PNG TITLE FUNC...
// Prints "ok" or "BAD: why" lines; exits 1 on a failure.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const [modules, profile, png, title, ...funcs] = process.argv.slice(2);
const puppeteer = require(path.join(modules, 'puppeteer-core'));
const site = path.join(modules, 'speedscope', 'dist', 'release');
const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
	       '.json': 'application/json', '.wasm': 'application/wasm',
	       '.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon'};
const bad = [];

const server = http.createServer((req, res) => {
	const url = decodeURIComponent(req.url.split('?')[0]);
	const file = url.startsWith('/profile/') ? profile
		: path.join(site, path.normalize(url === '/' ? '/index.html' : url));
	if (!file.startsWith(site) && file !== profile) {
		res.writeHead(403);
		return res.end();
	}
	fs.readFile(file, (err, data) => {
		if (err) {
			res.writeHead(404);
			return res.end();
		}
		res.writeHead(200, {'Content-Type': types[path.extname(file)] || 'application/octet-stream'});
		res.end(data);
	});
});

async function main() {
	await new Promise(ok => server.listen(0, '127.0.0.1', ok));
	const base = `http://127.0.0.1:${server.address().port}`;
	const name = path.basename(profile);
	const browser = await puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
	try {
		const page = await browser.newPage();
		await page.setViewport({width: 1280, height: 720});
		page.on('dialog', async d => {
			bad.push(`alert: ${d.message()}`);
			await d.dismiss();
		});
		page.on('pageerror', e => bad.push(`page error: ${e.message}`));
		const url = `${base}/index.html#profileURL=${encodeURIComponent(`${base}/profile/${name}`)}`;
		await page.goto(url, {waitUntil: 'networkidle0'});
		// loaded: the toolbar names the profile
		await page.waitForFunction(t => document.body.innerText.includes(t), {timeout: 20000}, title)
			.catch(() => bad.push(`the profile's name "${title}" never shown`));
		const text = await page.evaluate(() => document.body.innerText);
		for (const err of ['Something went wrong', 'Unrecognized format', 'Failed to'])
			if (text.includes(err))
				bad.push(`speedscope says: ${err}`);
		await new Promise(ok => setTimeout(ok, 500));
		await page.screenshot({path: png});
		// the Sandwich view lists every function in a table
		const [sandwich] = await page.$$('xpath/.//*[contains(text(), "Sandwich")]');
		if (!sandwich)
			bad.push('no Sandwich view');
		else
			await sandwich.click();
		await new Promise(ok => setTimeout(ok, 500));
		const table = await page.evaluate(() => document.body.innerText);
		for (const f of funcs)
			if (!table.includes(f))
				bad.push(`function ${f} not listed`);
	} finally {
		await browser.close();
		server.close();
	}
}

main().then(() => {
	for (const b of bad)
		console.log(`BAD: ${b}`);
	if (!bad.length)
		console.log('ok');
	process.exit(bad.length ? 1 : 0);
}, e => {
	console.log(`BAD: ${e.message}`);
	process.exit(1);
});
