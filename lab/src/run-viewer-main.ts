import { mountRunViewer } from './run-viewer.js';

const main = document.getElementById('main');
if (main) mountRunViewer(main);
