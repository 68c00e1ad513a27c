import { render } from 'preact';
import 'highlight.js/styles/github.css';
import './styles.css';
import { App } from './ui/app';

render(<App />, document.getElementById('app')!);
