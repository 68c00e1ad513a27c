import { render } from 'preact';
import './styles.css';
import './styles/conversation.css';
import { App } from './ui/app';
import { applyTheme, pageStorage, readTheme } from './ui/theme';

// Before the first paint, so a page someone set to dark never flashes light.
applyTheme(document.documentElement, readTheme(pageStorage()));

render(<App />, document.getElementById('app')!);
