/**
 * Highlight notebook code cells whose source starts with the `%%cuda` cell magic
 * as C++ (CodeMirror's cpp language, registered by JupyterLab as "C++",
 * mime text/x-c++src), and give them back the notebook's own mimetype
 * (from its kernel's language_info) once the magic is removed.
 *
 * The mimetype lives on the cell model only: it is not saved in the .ipynb
 * and does not mark the notebook dirty.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import type { IObservableList } from '@jupyterlab/observables';

const CUDA_MIME = 'text/x-c++src';
/** IPython strips leading blank lines and indentation before it looks for a cell magic. */
const CUDA_MAGIC = /^\s*%%cuda(\s|$)/;

function isCuda(source: string): boolean {
  return CUDA_MAGIC.test(source);
}

/** Watches the code cells of one notebook widget. */
function watchNotebook(notebook: Notebook): void {
  const seen = new WeakSet<ICellModel>();

  const apply = (cell: ICellModel): void => {
    if (cell.type !== 'code' || cell.isDisposed) {
      return;
    }
    const wanted = isCuda(cell.sharedModel.getSource())
      ? CUDA_MIME
      : notebook.codeMimetype;
    if (cell.mimeType !== wanted) {
      cell.mimeType = wanted;
    }
  };

  const watchCell = (cell: ICellModel): void => {
    if (cell.type !== 'code' || seen.has(cell)) {
      return;
    }
    seen.add(cell);
    cell.sharedModel.changed.connect((_, change) => {
      if (change.sourceChange) {
        apply(cell);
      }
    });
    // The notebook resets every code cell's mimetype when a cell is inserted
    // and when the kernel's language_info arrives: put C++ back afterwards.
    cell.mimeTypeChanged.connect(() => apply(cell));
    apply(cell);
  };

  const onCellsChanged = (
    _: unknown,
    change: IObservableList.IChangedArgs<ICellModel>
  ): void => {
    if (change.type === 'add' || change.type === 'set') {
      change.newValues.forEach(watchCell);
    }
  };

  const watchModel = (): void => {
    const model = notebook.model;
    if (!model) {
      return;
    }
    model.cells.changed.connect(onCellsChanged);
    for (let i = 0; i < model.cells.length; i++) {
      watchCell(model.cells.get(i));
    }
  };

  notebook.modelChanged.connect((_, __) => watchModel());
  watchModel();
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: '@flashcourse/cuda-cells:plugin',
  description: 'Highlight %%cuda notebook cells as CUDA C++.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    const watch = (panel: NotebookPanel): void => watchNotebook(panel.content);
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
  }
};

export default plugin;
